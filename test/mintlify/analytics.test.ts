/**
 * The feedback, searches and assistant exports: what the client sends, and that it reads what
 * the fake (checked against the published spec in test/contracts/) answers.
 */
import { describe, expect, it } from 'vitest';
import { SchemaError } from '../../src/mintlify/index.js';
import type { FakeConversation, FakeFeedbackEntry, FakeSearchRow } from '../fakes/mintlifyFake.js';
import { failureOf, fakeAndClient, PROJECT_ID } from './clientHarness.js';

const range = { dateFrom: '2025-01-01', dateTo: '2025-01-08T00:00:00Z' };

function feedbackEntry(id: string, patch: Partial<FakeFeedbackEntry> = {}): FakeFeedbackEntry {
  return {
    id,
    path: '/quickstart',
    comment: null,
    createdAt: '2025-01-02T10:00:00Z',
    source: 'contextual',
    status: 'pending',
    helpful: false,
    contact: null,
    ...patch,
  };
}

function conversation(id: string, patch: Partial<FakeConversation> = {}): FakeConversation {
  return {
    id,
    timestamp: '2025-01-03T12:00:00Z',
    query: 'How do I rotate a key?',
    response: 'I could not find that in the docs.',
    sources: [],
    resolutionStatus: 'unanswered',
    queryCategory: null,
    pageUrl: null,
    ...patch,
  };
}

describe('the analytics exports beyond visitors', () => {
  it('feedbackPage sends the range, limit, cursor, source and statuses, and follows nextCursor', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setFeedback([
      feedbackEntry('fb-1', { comment: 'Step 3 is out of date', contact: 'ada@example.com' }),
      feedbackEntry('fb-2', { source: 'thumbs_only', status: 'in_progress' }),
      feedbackEntry('fb-3', { path: '/faq', createdAt: null, status: 'dismissed' }),
    ]);

    const first = await client.feedbackPage(PROJECT_ID, { ...range, limit: 1, source: 'contextual' });
    const second = await client.feedbackPage(PROJECT_ID, {
      ...range,
      limit: 1,
      cursor: first.nextCursor ?? '',
      source: 'contextual',
    });
    const all = await client.feedbackPage(PROJECT_ID, range);
    const open = await client.feedbackPage(PROJECT_ID, { ...range, status: ['pending', 'in_progress'] });

    expect(first).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    expect(first.feedback).toEqual([
      feedbackEntry('fb-1', { comment: 'Step 3 is out of date', contact: 'ada@example.com' }),
    ]);
    expect(second).toEqual({
      feedback: [feedbackEntry('fb-3', { path: '/faq', createdAt: null, status: 'dismissed' })],
      nextCursor: null,
      hasMore: false,
    });
    expect(all.feedback.map((entry) => [entry.id, entry.source, entry.helpful])).toEqual([
      ['fb-1', 'contextual', false],
      // A thumbs_only vote comes with the base fields only.
      ['fb-2', 'thumbs_only', undefined],
      ['fb-3', 'contextual', false],
    ]);
    expect(open.feedback.map((entry) => entry.id)).toEqual(['fb-1', 'fb-2']);
    expect(fake.requestsFor('feedback').map((request) => request.query)).toEqual([
      { ...range, limit: '1', source: 'contextual' },
      { ...range, limit: '1', cursor: first.nextCursor, source: 'contextual' },
      range,
      { ...range, status: 'pending,in_progress' },
    ]);
  });

  it('feedbackByPage sends the range, limit, source and statuses, and reads the counts per path', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setFeedback([
      feedbackEntry('a', { path: '/api', helpful: true }),
      feedbackEntry('b', { path: '/api', source: 'code_snippet', status: 'dismissed' }),
      feedbackEntry('c', { path: '/intro' }),
    ]);

    const page = await client.feedbackByPage(PROJECT_ID, { ...range, limit: 1 });
    const contextual = await client.feedbackByPage(PROJECT_ID, { ...range, source: 'contextual' });
    const open = await client.feedbackByPage(PROJECT_ID, { ...range, status: ['pending', 'in_progress'] });

    expect(page).toEqual({
      feedback: [{ path: '/api', thumbsUp: 1, thumbsDown: 0, code: 1, total: 2 }],
      hasMore: true,
    });
    expect(contextual.feedback.map((row) => row.path)).toEqual(['/api', '/intro']);
    // The docs team dismissed the code block's feedback: it is not counted.
    expect(open.feedback).toEqual([
      { path: '/api', thumbsUp: 1, thumbsDown: 0, code: 0, total: 1 },
      { path: '/intro', thumbsUp: 0, thumbsDown: 1, code: 0, total: 1 },
    ]);
    expect(fake.requestsFor('feedbackByPage').map((request) => request.query)).toEqual([
      { ...range, limit: '1' },
      { ...range, source: 'contextual' },
      { ...range, status: 'pending,in_progress' },
    ]);
  });

  it('searchesPage sends the range, limit and cursor, and reads the terms most searched first', async () => {
    const { fake, client } = await fakeAndClient();
    const row = (searchQuery: string, hits: number): FakeSearchRow => ({
      searchQuery,
      hits,
      ctr: 0.25,
      topClickedPage: null,
      lastSearchedAt: '2025-01-07T09:30:00Z',
    });
    fake.setSearches([row('webhooks', 3), row('auth', 12), row('rate limit', 7)], 40);

    const first = await client.searchesPage(PROJECT_ID, { ...range, limit: 2 });
    const second = await client.searchesPage(PROJECT_ID, {
      ...range,
      limit: 2,
      cursor: first.nextCursor ?? '',
    });

    expect(first.searches.map((search) => search.searchQuery)).toEqual(['auth', 'rate limit']);
    expect(first.totalSearches).toBe(40);
    expect(second).toEqual({ searches: [row('webhooks', 3)], totalSearches: 40, nextCursor: null });
    expect(fake.requestsFor('searches').map((request) => request.query)).toEqual([
      { ...range, limit: '2' },
      { ...range, limit: '2', cursor: first.nextCursor },
    ]);
  });

  it('assistantPage sends the range, limit and cursor, and reads the conversations', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setConversations([
      conversation('conv-1', {
        resolutionStatus: 'answered',
        responseType: 'answer',
        sources: [{ title: 'Keys', url: 'https://docs.acme.com/keys' }],
        queryCategory: 'Authentication',
        pageUrl: 'https://docs.acme.com/keys',
      }),
      conversation('conv-2'),
    ]);

    const first = await client.assistantPage(PROJECT_ID, { ...range, limit: 1 });
    const second = await client.assistantPage(PROJECT_ID, {
      ...range,
      limit: 1,
      cursor: first.nextCursor ?? '',
    });

    expect(first).toMatchObject({
      conversations: [{ id: 'conv-1', resolutionStatus: 'answered' }],
      hasMore: true,
    });
    expect(second).toEqual({ conversations: [conversation('conv-2')], nextCursor: null, hasMore: false });
    expect(fake.requestsFor('assistant').map((request) => request.query)).toEqual([
      { ...range, limit: '1' },
      { ...range, limit: '1', cursor: first.nextCursor },
    ]);
  });

  it('an answer that breaks the spec is a SchemaError named after the operation', async () => {
    const { fake, client } = await fakeAndClient();
    fake.injectFault('searches', { schemaBreaking: true });

    const error = await failureOf(client.searchesPage(PROJECT_ID, range));

    expect(error).toBeInstanceOf(SchemaError);
    expect(error).toMatchObject({ operation: 'searchesPage' });
    expect(fake.requestsFor('searches')).toHaveLength(1);
  });
});
