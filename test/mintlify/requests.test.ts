import { describe, expect, it } from 'vitest';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { API_KEY, fakeAndClient, newClient, onCleanup, PROJECT_ID, USER_AGENT } from './clientHarness.js';

describe('what Mintlify receives from the client', () => {
  it('creates a job with a JSON prompt, the bearer key and our User-Agent', async () => {
    const { fake, client } = await fakeAndClient();

    const job = await client.createJob(PROJECT_ID, 'Document the new webhook');

    expect(job).toMatchObject({ status: 'active', prLink: null, archivedAt: null });
    expect(job.id).toBeTypeOf('string');
    const [request] = fake.requestsTo('POST', /\/job$/);
    expect(request?.path).toBe(`/v2/agent/${PROJECT_ID}/job`);
    expect(request?.body).toEqual({ prompt: 'Document the new webhook' });
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers['content-type']).toBe('application/json');
  });

  it('encodes path segments, so a project id like "a/b c" stays one segment', async () => {
    const fake = await startMintlifyFake({ apiKey: API_KEY, projectId: 'a/b c' });
    onCleanup(() => fake.close());
    const { client } = newClient(fake.url);
    fake.setJob('x/y?z', { status: 'completed' });

    const job = await client.getJob('a/b c', 'x/y?z');
    await client.sendMessage('a/b c', 'x/y?z', 'also fix the typo');
    await client.visitorsPage('a/b c', { dateFrom: '2025-01-01', dateTo: '2025-01-08' });

    expect(job.id).toBe('x/y?z');
    expect(fake.requests.map((request) => request.path)).toEqual([
      '/v2/agent/a%2Fb%20c/job/x%2Fy%3Fz',
      '/v2/agent/a%2Fb%20c/job/x%2Fy%3Fz/message',
      '/v1/analytics/a%2Fb%20c/visitors',
    ]);
    for (const request of fake.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers['user-agent']).toBe(USER_AGENT);
    }
  });

  it('reads a finished job with its pull request link', async () => {
    const { fake, client } = await fakeAndClient();
    const created = await client.createJob(PROJECT_ID, 'Explain rate limits');
    fake.setJob(created.id ?? '', { status: 'completed', prLink: 'https://github.com/org/repo/pull/1' });

    const job = await client.getJob(PROJECT_ID, created.id ?? '');

    expect(job).toMatchObject({
      id: created.id,
      status: 'completed',
      prLink: 'https://github.com/org/repo/pull/1',
    });
    expect(fake.requestsTo('GET', `/v2/agent/${PROJECT_ID}/job/${created.id}`)).toHaveLength(1);
  });

  it('a follow-up reopens the job on its branch, with no pull request link while it works (the spec)', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setJob('job-7', { status: 'completed', prLink: 'https://github.com/org/repo/pull/7' });

    const job = await client.sendMessage(PROJECT_ID, 'job-7', 'Shorten the intro');

    expect(job).toMatchObject({ status: 'active', prLink: null, source: { ref: 'mintlify/job-7' } });
    expect(() => fake.setJob('job-7', { prLink: 'https://github.com/org/repo/pull/7' })).toThrow(/active/);
    expect(fake.requestsTo('POST', /\/message$/)[0]?.body).toEqual({ prompt: 'Shorten the intro' });
  });

  it('keeps fields the spec does not list and accepts a job with no fields at all', async () => {
    const { fake, client } = await fakeAndClient();
    // Fields Mintlify may add later: the fake serves only the spec's, so the answer is injected.
    fake.injectFault('getJob', { status: 200, body: {} });
    fake.injectFault('getJob', {
      status: 200,
      body: { id: 'job-1', title: 'Webhooks', source: { repository: 'r', ref: null, monorepoPath: '/docs' } },
    });

    const empty = await client.getJob(PROJECT_ID, 'job-1');
    const full = await client.getJob(PROJECT_ID, 'job-1');

    expect(empty).toEqual({});
    expect(full.title).toBe('Webhooks');
    expect(full.source).toEqual({ repository: 'r', ref: null, monorepoPath: '/docs' });
  });

  it('sends the date range, limit and offset of a visitors page', async () => {
    const { fake, client } = await fakeAndClient();
    // A row field Mintlify may add later (`bounce`): the fake serves only the spec's, so the page is injected.
    fake.injectFault('visitors', {
      status: 200,
      body: {
        totals: { human: 9, ai: 2, total: 10 },
        visitors: [{ path: '/intro', human: 3, ai: 1, total: 4, bounce: 0.5 }],
        hasMore: false,
      },
    });

    const page = await client.visitorsPage(PROJECT_ID, {
      dateFrom: '2025-01-01',
      dateTo: '2025-01-08T00:00:00Z',
      limit: 10,
      offset: 0,
    });

    expect(page).toEqual({
      totals: { human: 9, ai: 2, total: 10 },
      visitors: [{ path: '/intro', human: 3, ai: 1, total: 4, bounce: 0.5 }],
      hasMore: false,
    });
    expect(fake.requestsFor('visitors')[0]?.query).toEqual({
      dateFrom: '2025-01-01',
      dateTo: '2025-01-08T00:00:00Z',
      limit: '10',
      offset: '0',
    });
  });
});
