/**
 * Every kind of answer the Mintlify fake gives must be one the published specs allow, so tests
 * that pass against the fake say something about the real service. Requests go over raw HTTP:
 * the client would turn error bodies into exceptions before we could check them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentJob, DeploymentState, VisitorsRow } from '../../src/mintlify/index.js';
import {
  type FakeConversation,
  type FakeOperation,
  type MintlifyFake,
  type MintlifyFakeOptions,
  startMintlifyFake,
} from '../fakes/mintlifyFake.js';
import { checkFakeAnswer } from './fakeAnswers.js';
import { type SpecName, validateComponent, validateResponse } from './openapi.js';

type FeedbackBody = { feedback: Array<Record<string, unknown>> };

const API_KEY = 'mint_contract_key';
const PROJECT_ID = 'proj-contract';
const CREATE = '/v2/agent/{projectId}/job';
const GET = '/v2/agent/{projectId}/job/{id}';
const MESSAGE = '/v2/agent/{projectId}/job/{id}/message';
const VISITORS = '/v1/analytics/{projectId}/visitors';
const FEEDBACK = '/v1/analytics/{projectId}/feedback';
const FEEDBACK_BY_PAGE = '/v1/analytics/{projectId}/feedback/by-page';
const SEARCHES = '/v1/analytics/{projectId}/searches';
const ASSISTANT = '/v1/analytics/{projectId}/assistant';
// The deployments spec's server is https://api.mintlify.com/v1: its paths start after /v1.
const PREVIEW = '/project/preview/{projectId}';
const STATUS = '/project/update-status/{statusId}';

let fake: MintlifyFake;
beforeAll(async () => {
  fake = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID });
});
// The fake checks each answer itself too: nothing any case provoked broke the spec.
afterEach(() => {
  expect(fake.takeViolations()).toEqual([]);
});
afterAll(() => fake.close());

async function call(method: 'GET' | 'POST', path: string, body?: unknown, key = API_KEY) {
  const response = await fetch(`${fake.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

function expectValid(result: { valid: boolean; errors: string[] }): void {
  expect(result.errors).toEqual([]);
  expect(result.valid).toBe(true);
}

function expectDeclared(
  spec: SpecName,
  method: string,
  template: string,
  answer: { status: number; body: unknown },
) {
  expectValid(validateResponse(spec, method, template, answer.status, answer.body));
}

const jobPath = (id: string) => `/v2/agent/${PROJECT_ID}/job/${encodeURIComponent(id)}`;
const visitorsPath = (query: string) => `/v1/analytics/${PROJECT_ID}/visitors?${query}`;
const analyticsPath = (endpoint: string, query: string) => `/v1/analytics/${PROJECT_ID}/${endpoint}?${query}`;
const RANGE = 'dateFrom=2025-01-01&dateTo=2025-01-08';

/** The page's `nextCursor`, percent-encoded for the next request's query. */
function cursorOf(answer: { body: unknown }): string {
  const { nextCursor } = answer.body as { nextCursor: unknown };
  expect(nextCursor).toBeTypeOf('string');
  return encodeURIComponent(nextCursor as string);
}

/** A 429 is not declared by the analytics spec: its body must still be the analytics error body. */
function expectRateLimitBody(answer: { status: number; body: unknown }): void {
  expect(answer.status).toBe(429);
  expectValid(validateComponent('analytics', 'AnalyticsErrorResponse', answer.body));
}

describe('the Mintlify fake answers what the published specs allow', () => {
  it('create: 201 job, 400 empty prompt, 429 rate limit', async () => {
    const created = await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'Document webhooks' });
    const invalid = await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: '' });
    fake.injectFault('createJob', { status: 429, retryAfter: '60' });
    const limited = await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'x' });

    expect([created.status, invalid.status, limited.status]).toEqual([201, 400, 429]);
    expectDeclared('admin', 'POST', CREATE, created);
    expectDeclared('admin', 'POST', CREATE, invalid);
    expectDeclared('admin', 'POST', CREATE, limited);
  });

  it('get: 200 for every job state, 404 for an unknown job', async () => {
    fake.setJob('job-active', {});
    fake.setJob('job-done', { status: 'completed', prLink: 'https://github.com/org/repo/pull/1' });
    fake.setJob('job-failed', { status: 'failed' });
    fake.setJob('job-archived', { status: 'archived' });

    for (const id of ['job-active', 'job-done', 'job-failed', 'job-archived']) {
      const answer = await call('GET', jobPath(id));
      expect(answer.status).toBe(200);
      expectDeclared('admin', 'GET', GET, answer);
    }
    const missing = await call('GET', jobPath('nope'));
    expect(missing.status).toBe(404);
    expectDeclared('admin', 'GET', GET, missing);
  });

  it('message: 200 job, 404 unknown job, 400 empty prompt', async () => {
    fake.setJob('job-steer', { status: 'completed', prLink: 'https://github.com/org/repo/pull/2' });

    const sent = await call('POST', `${jobPath('job-steer')}/message`, { prompt: 'Shorter, please' });
    const missing = await call('POST', `${jobPath('nope')}/message`, { prompt: 'x' });
    const invalid = await call('POST', `${jobPath('job-steer')}/message`, {});

    expect([sent.status, missing.status, invalid.status]).toEqual([200, 404, 400]);
    for (const answer of [sent, missing, invalid]) expectDeclared('admin', 'POST', MESSAGE, answer);
  });

  it('visitors: 200 pages, 400 with details, 500', async () => {
    fake.setVisitors(
      Array.from({ length: 5 }, (_, i) => ({ path: `/p${i}`, human: i, ai: 1, total: i + 1 })),
      { human: 10, ai: 5, total: 14 },
    );

    const first = await call('GET', visitorsPath('dateFrom=2025-01-01&dateTo=2025-01-08&limit=2&offset=0'));
    const last = await call(
      'GET',
      visitorsPath('dateFrom=2025-01-01T00:00:00Z&dateTo=2025-01-08&limit=2&offset=4'),
    );
    const invalid = await call('GET', visitorsPath('dateFrom=yesterday&dateTo=2025-01-08&limit=0&offset=-1'));
    fake.injectFault('visitors', { status: 500 });
    const failed = await call('GET', visitorsPath('dateFrom=2025-01-01&dateTo=2025-01-08'));

    expect([first.status, last.status, invalid.status, failed.status]).toEqual([200, 200, 400, 500]);
    expect(invalid.body).toMatchObject({ details: expect.arrayContaining([expect.any(Object)]) });
    for (const answer of [first, last, invalid, failed]) expectDeclared('analytics', 'GET', VISITORS, answer);
  });

  it('feedback: 200 pages through the cursor, filtered by source and status; 400 with details; 429', async () => {
    fake.setFeedback([
      {
        id: 'fb-1',
        path: '/quickstart',
        comment: 'Step 3 is out of date',
        createdAt: '2025-01-02T10:00:00Z',
        source: 'contextual',
        status: 'pending',
        helpful: false,
        contact: 'ada@example.com',
      },
      {
        id: 'fb-2',
        path: '/quickstart',
        comment: null,
        createdAt: null,
        source: 'thumbs_only',
        status: 'resolved',
        helpful: true,
        contact: null,
      },
      {
        id: 'fb-3',
        path: '/api/auth',
        comment: 'This snippet does not compile',
        createdAt: '2025-01-03',
        source: 'code_snippet',
        status: 'in_progress',
        helpful: false,
        contact: null,
      },
    ]);

    const first = await call('GET', analyticsPath('feedback', `${RANGE}&limit=2`));
    const second = await call('GET', analyticsPath('feedback', `${RANGE}&limit=2&cursor=${cursorOf(first)}`));
    const contextual = await call('GET', analyticsPath('feedback', `${RANGE}&source=contextual`));
    // The spec's status filter: a comma-separated list of statuses.
    const open = await call('GET', analyticsPath('feedback', `${RANGE}&status=pending,in_progress`));
    const invalid = await call('GET', analyticsPath('feedback', 'dateTo=2025-01-08&limit=101&source=email'));
    const badCursor = await call('GET', analyticsPath('feedback', `${RANGE}&cursor=nope`));
    fake.injectFault('feedback', { status: 429 });
    const limited = await call('GET', analyticsPath('feedback', RANGE));

    expect([first.status, second.status, contextual.status, invalid.status, badCursor.status]).toEqual([
      200, 200, 200, 400, 400,
    ]);
    expect(first.body).toMatchObject({ hasMore: true, feedback: [{ id: 'fb-1' }, { id: 'fb-2' }] });
    expect(second.body).toEqual({
      feedback: [expect.objectContaining({ id: 'fb-3' })],
      nextCursor: null,
      hasMore: false,
    });
    expect(contextual.body).toMatchObject({ feedback: [{ id: 'fb-1' }], nextCursor: null, hasMore: false });
    expect(open.body).toMatchObject({ feedback: [{ id: 'fb-1' }, { id: 'fb-3' }], hasMore: false });
    // Each entry in the spec's variant for its source, nothing more.
    const base = ['comment', 'createdAt', 'id', 'path', 'source', 'status'];
    const served = [...(first.body as FeedbackBody).feedback, ...(second.body as FeedbackBody).feedback];
    expect(served.map((entry) => Object.keys(entry).sort())).toEqual([
      [...base, 'contact', 'helpful'].sort(),
      base,
      [...base, 'code', 'filename', 'lang'].sort(),
    ]);
    expect((invalid.body as { details: unknown[] }).details).toHaveLength(3);
    for (const answer of [first, second, contextual, open, invalid, badCursor])
      expectDeclared('analytics', 'GET', FEEDBACK, answer);
    expectRateLimitBody(limited);
  });

  it('feedback by page: 200 counts per path, in the order first seen, filtered by status; 400 with details; 429', async () => {
    const entry = { comment: null, createdAt: null, status: 'pending', contact: null } as const;
    fake.setFeedback([
      { ...entry, id: 'a', path: '/intro', source: 'contextual', helpful: true },
      { ...entry, id: 'b', path: '/api', source: 'code_snippet', helpful: false, status: 'resolved' },
      { ...entry, id: 'c', path: '/api', source: 'thumbs_only', helpful: false, status: 'dismissed' },
      { ...entry, id: 'd', path: '/api', source: 'contextual', helpful: true },
      { ...entry, id: 'e', path: '/faq', source: 'agent', helpful: false },
    ]);

    const all = await call('GET', analyticsPath('feedback/by-page', RANGE));
    const top = await call('GET', analyticsPath('feedback/by-page', `${RANGE}&limit=1`));
    const resolved = await call(
      'GET',
      analyticsPath('feedback/by-page', `${RANGE}&status=resolved,dismissed`),
    );
    const invalid = await call('GET', analyticsPath('feedback/by-page', 'dateFrom=2025-13-45&limit=0'));
    fake.injectFault('feedbackByPage', { status: 429, retryAfter: '120' });
    const limited = await call('GET', analyticsPath('feedback/by-page', RANGE));

    expect([all.status, top.status, invalid.status]).toEqual([200, 200, 400]);
    expect(all.body).toEqual({
      feedback: [
        // The spec counts contextual entries as thumbs: the thumbs_only vote is in the total only.
        { path: '/intro', thumbsUp: 1, thumbsDown: 0, code: 0, total: 1 },
        { path: '/api', thumbsUp: 1, thumbsDown: 0, code: 1, total: 3 },
        { path: '/faq', thumbsUp: 0, thumbsDown: 0, code: 0, total: 1 },
      ],
      hasMore: false,
    });
    expect(top.body).toMatchObject({ feedback: [{ path: '/intro' }], hasMore: true });
    // Only the entries of the statuses asked for are counted.
    expect(resolved.body).toEqual({
      feedback: [{ path: '/api', thumbsUp: 0, thumbsDown: 0, code: 1, total: 2 }],
      hasMore: false,
    });
    expect(invalid.body).toMatchObject({ details: expect.arrayContaining([expect.any(Object)]) });
    for (const answer of [all, top, resolved, invalid])
      expectDeclared('analytics', 'GET', FEEDBACK_BY_PAGE, answer);
    expectRateLimitBody(limited);
  });

  it('searches: 200 pages by hits descending through the cursor; 400 with details; 429', async () => {
    const row = { ctr: 0.5, topClickedPage: null, lastSearchedAt: '2025-01-07T09:30:00Z' };
    fake.setSearches([
      { ...row, searchQuery: 'webhooks', hits: 3 },
      { ...row, searchQuery: 'auth', hits: 12, topClickedPage: '/api/auth' },
      { ...row, searchQuery: 'rate limit', hits: 7, ctr: 0 },
    ]);

    const first = await call('GET', analyticsPath('searches', `${RANGE}&limit=2`));
    const second = await call('GET', analyticsPath('searches', `${RANGE}&limit=2&cursor=${cursorOf(first)}`));
    const invalid = await call('GET', analyticsPath('searches', 'dateFrom=2025-01-01&limit=2.5'));
    // A cursor of another endpoint is not one this endpoint gave.
    const foreign = Buffer.from('feedback:2').toString('base64url');
    const badCursor = await call('GET', analyticsPath('searches', `${RANGE}&cursor=${foreign}`));
    fake.injectFault('searches', { status: 429 });
    const limited = await call('GET', analyticsPath('searches', RANGE));

    expect([first.status, second.status, invalid.status, badCursor.status]).toEqual([200, 200, 400, 400]);
    expect(first.body).toMatchObject({
      searches: [{ searchQuery: 'auth' }, { searchQuery: 'rate limit' }],
      totalSearches: 22,
    });
    expect(second.body).toMatchObject({ searches: [{ searchQuery: 'webhooks' }], nextCursor: null });
    for (const answer of [first, second, invalid, badCursor])
      expectDeclared('analytics', 'GET', SEARCHES, answer);
    expectRateLimitBody(limited);
  });

  it('assistant: 200 pages through the cursor; 400 with details; 429', async () => {
    fake.setConversations(
      Array.from({ length: 3 }, (_, i) => ({
        id: `conv-${i}`,
        timestamp: `2025-01-0${i + 2}T12:00:00Z`,
        query: `question ${i}`,
        response: `answer ${i}`,
        ...(i === 1 ? { responseType: 'clarifying_question' as const } : {}),
        sources: i === 0 ? [{ title: 'Quickstart', url: 'https://docs.acme.com/quickstart' }] : [],
        resolutionStatus: i === 2 ? ('unanswered' as const) : ('answered' as const),
        queryCategory: i === 0 ? 'Getting started' : null,
        pageUrl: i === 0 ? 'https://docs.acme.com/quickstart' : null,
      })),
    );

    const first = await call('GET', analyticsPath('assistant', `${RANGE}&limit=2`));
    const second = await call(
      'GET',
      analyticsPath('assistant', `${RANGE}&limit=2&cursor=${cursorOf(first)}`),
    );
    const invalid = await call('GET', analyticsPath('assistant', `${RANGE}&limit=1001&cursor=not-a-ulid`));
    fake.injectFault('assistant', { status: 429 });
    const limited = await call('GET', analyticsPath('assistant', RANGE));

    expect([first.status, second.status, invalid.status]).toEqual([200, 200, 400]);
    expect(first.body).toMatchObject({ conversations: [{ id: 'conv-0' }, { id: 'conv-1' }], hasMore: true });
    expect((first.body as { nextCursor: string }).nextCursor).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(second.body).toMatchObject({
      conversations: [{ id: 'conv-2' }],
      nextCursor: null,
      hasMore: false,
    });
    expect((invalid.body as { details: unknown[] }).details).toHaveLength(2);
    for (const answer of [first, second, invalid]) expectDeclared('analytics', 'GET', ASSISTANT, answer);
    expectRateLimitBody(limited);
  });

  // Neither spec declares 401 or 403; the docs say error bodies are `{error}` / `{error, details?}`.
  it('401 and 403 carry the error body of their spec', async () => {
    const adminUnauthorized = await call('GET', jobPath('job-active'), undefined, 'mint_wrong');
    const analyticsUnauthorized = await call(
      'GET',
      visitorsPath('dateFrom=2025-01-01&dateTo=2025-01-08'),
      undefined,
      '',
    );
    fake.injectFault('createJob', { status: 403 });
    const forbidden = await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'x' });

    expect([adminUnauthorized.status, analyticsUnauthorized.status, forbidden.status]).toEqual([
      401, 401, 403,
    ]);
    expectValid(validateComponent('admin', 'Error', adminUnauthorized.body));
    expectValid(validateComponent('analytics', 'AnalyticsErrorResponse', analyticsUnauthorized.body));
    expectValid(validateComponent('admin', 'Error', forbidden.body));
  });

  it('a schema-breaking fault fails validation, so this test can fail', async () => {
    fake.setJob('job-broken', {});
    fake.injectFault('getJob', { schemaBreaking: true });
    fake.injectFault('visitors', { schemaBreaking: true });

    const job = await call('GET', jobPath('job-broken'));
    const page = await call('GET', visitorsPath('dateFrom=2025-01-01&dateTo=2025-01-08'));

    const jobResult = validateResponse('admin', 'GET', GET, job.status, job.body);
    const pageResult = validateResponse('analytics', 'GET', VISITORS, page.status, page.body);
    expect(jobResult.valid).toBe(false);
    expect(jobResult.errors.join()).toMatch(/\/status/);
    expect(pageResult.valid).toBe(false);
    expect(pageResult.errors.join()).toMatch(/\/hasMore/);
  });

  it('a schema-breaking fault breaks the feedback, searches and assistant answers too', async () => {
    const endpoints = [
      ['feedback', 'feedback', FEEDBACK, /\/hasMore/],
      ['feedbackByPage', 'feedback/by-page', FEEDBACK_BY_PAGE, /\/hasMore/],
      ['searches', 'searches', SEARCHES, /\/searches/],
      ['assistant', 'assistant', ASSISTANT, /\/hasMore/],
    ] as const;
    for (const [operation, endpoint, template, field] of endpoints) {
      fake.injectFault(operation, { schemaBreaking: true });
      const answer = await call('GET', analyticsPath(endpoint, RANGE));
      const result = validateResponse('analytics', 'GET', template, answer.status, answer.body);
      expect(result.valid).toBe(false);
      expect(result.errors.join()).toMatch(field);
    }
  });

  it('preview: 202 deployment, 400 without a branch, 403 on a plan without previews; status: 200 in each state', async () => {
    const asked = await call('POST', `/v1/project/preview/${PROJECT_ID}`, { branch: 'mintlify/job-7' });
    const noBranch = await call('POST', `/v1/project/preview/${PROJECT_ID}`, {});
    fake.setPreviewsAvailable(false);
    const refused = await call('POST', `/v1/project/preview/${PROJECT_ID}`, { branch: 'mintlify/job-7' });
    fake.setPreviewsAvailable(true);
    expect([asked.status, noBranch.status, refused.status]).toEqual([202, 400, 403]);
    for (const answer of [asked, noBranch, refused]) expectDeclared('deploy', 'POST', PREVIEW, answer);

    const { statusId } = asked.body as { statusId: string };
    const read = () => call('GET', `/v1/project/update-status/${statusId}`);
    const states = [await read()];
    fake.setDeployment(statusId, { status: 'in_progress' });
    states.push(await read());
    fake.setDeployment(statusId, { status: 'failure', summary: 'Broken link in quickstart.mdx' });
    states.push(await read());
    fake.setDeployment(statusId, { status: 'success', summary: 'Deployed' });
    states.push(await read());
    expect(states.map((state) => (state.body as { status: string }).status)).toEqual([
      'queued',
      'in_progress',
      'failure',
      'success',
    ]);
    for (const state of states) expectDeclared('deploy', 'GET', STATUS, state);
    fake.injectFault('deploymentStatus', { schemaBreaking: true });
    const broken = await read();
    expect(validateResponse('deploy', 'GET', STATUS, broken.status, broken.body).valid).toBe(false);
  });

  it('the answers no other case provokes: other projects, unknown statuses, 401 everywhere, follow-ups taken up later', async () => {
    const other = 'proj-other';
    fake.setJob('job-later', { status: 'completed', prLink: 'https://github.com/org/repo/pull/3' });
    const answers = {
      createOther: await call('POST', `/v2/agent/${other}/job`, { prompt: 'x' }),
      getOther: await call('GET', `/v2/agent/${other}/job/job-later`),
      messageOther: await call('POST', `/v2/agent/${other}/job/job-later/message`, { prompt: 'x' }),
      visitorsOther: await call('GET', `/v1/analytics/${other}/visitors?${RANGE}`),
      previewOther: await call('POST', `/v1/project/preview/${other}`, { branch: 'b' }),
      statusUnknown: await call('GET', '/v1/project/update-status/status-never-given'),
      createUnauthorized: await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'x' }, 'mint_wrong'),
      messageUnauthorized: await call(
        'POST',
        `${jobPath('job-later')}/message`,
        { prompt: 'x' },
        'mint_wrong',
      ),
      previewUnauthorized: await call(
        'POST',
        `/v1/project/preview/${PROJECT_ID}`,
        { branch: 'b' },
        'mint_wrong',
      ),
      statusUnauthorized: await call('GET', '/v1/project/update-status/status-1', undefined, 'mint_wrong'),
    };
    fake.setPreviewUrlsGiven(false);
    const withoutUrl = await call('POST', `/v1/project/preview/${PROJECT_ID}`, { branch: 'no-url' });
    fake.setPreviewUrlsGiven(true);
    fake.setBranchesNamedAtOnce(false);
    const unnamed = await call('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'No branch yet' });
    fake.setBranchesNamedAtOnce(true);
    fake.setDeploymentStatesGiven(false);
    const stateless = await call(
      'GET',
      `/v1/project/update-status/${(withoutUrl.body as { statusId: string }).statusId}`,
    );
    fake.setDeploymentStatesGiven(true);
    fake.takeUpFollowUpsLater();
    const later = await call('POST', `${jobPath('job-later')}/message`, { prompt: 'Later' });

    expect(Object.values(answers).map(({ status }) => status)).toEqual([
      403, 403, 403, 403, 403, 404, 401, 401, 401, 401,
    ]);
    expect([withoutUrl.status, unnamed.status, stateless.status, later.status]).toEqual([202, 201, 200, 200]);
    expect(unnamed.body).toMatchObject({ status: 'active', source: { ref: null } });
    expectDeclared('admin', 'POST', CREATE, unnamed);
    expect(stateless.body).not.toHaveProperty('status');
    expectDeclared('deploy', 'GET', STATUS, stateless);
    expect(later.body).toMatchObject({ status: 'completed' });
    expectDeclared('deploy', 'POST', PREVIEW, answers.previewOther);
    expectDeclared('deploy', 'POST', PREVIEW, withoutUrl);
    expectDeclared('admin', 'POST', MESSAGE, later);
    for (const answer of [answers.createOther, answers.getOther, answers.messageOther])
      expectValid(validateComponent('admin', 'Error', answer.body));
    expectValid(validateComponent('analytics', 'AnalyticsErrorResponse', answers.visitorsOther.body));
    // The deployments spec has no error component: its errors are `{error: string}`, written inline.
    for (const answer of [answers.statusUnknown, answers.previewUnauthorized, answers.statusUnauthorized])
      expectDeclared('deploy', 'POST', PREVIEW, { status: 400, body: answer.body });
  });

  it('the helper applies OpenAPI 3.0 nullable only where the spec says so', () => {
    expectValid(
      validateComponent('admin', 'AgentJob', { prLink: null, archivedAt: null, source: { ref: null } }),
    );
    expect(validateComponent('admin', 'AgentJob', { id: null }).valid).toBe(false);
    expect(validateComponent('admin', 'AgentJob', { prLink: 'not a uri' }).valid).toBe(false);
  });

  it('the helper refuses a field the spec does not list, at any depth', () => {
    expect(validateComponent('admin', 'AgentJob', { id: 'job-1', title: 'not in the spec' }).valid).toBe(
      false,
    );
    expect(validateComponent('admin', 'AgentJob', { source: { monorepoPath: '/docs' } }).valid).toBe(false);
  });
});

describe('the Mintlify fake keeps the documented limits', () => {
  let limited: MintlifyFake;
  let now = Date.parse('2026-11-23T09:00:00Z');
  beforeAll(async () => {
    limited = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID, now: () => now });
  });
  afterAll(() => limited.close());

  const send = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${limited.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const statuses = async (count: number, request: () => Promise<{ status: number }>) => {
    const seen: number[] = [];
    for (let i = 0; i < count; i += 1) seen.push((await request()).status);
    return seen;
  };

  it('100 agent uses per project an hour, creates and follow-ups together; reads are not uses', async () => {
    const created = await send('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'Document webhooks' });
    const { id } = created.body as { id: string };
    const uses = [
      created.status,
      ...(await statuses(49, () => send('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'x' }))),
      ...(await statuses(50, () => send('POST', `${jobPath(id)}/message`, { prompt: 'y' }))),
    ];
    expect(uses.filter((status) => status !== 201 && status !== 200)).toEqual([]);
    expect((await send('GET', jobPath(id))).status).toBe(200);
    const over = await send('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'one too many' });
    const overMessage = await send('POST', `${jobPath(id)}/message`, { prompt: 'one too many' });
    expect([over.status, overMessage.status]).toEqual([429, 429]);
    expectDeclared('admin', 'POST', CREATE, over);
    expectDeclared('admin', 'POST', MESSAGE, overMessage);

    now += 3_600_000; // the first uses are an hour old
    expect((await send('POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'next hour' })).status).toBe(201);
  });

  it('100 analytics requests an hour across every analytics endpoint', async () => {
    const endpoints = ['visitors', 'feedback', 'feedback/by-page', 'searches', 'assistant'];
    const seen = await statuses(100, async () => {
      const endpoint = endpoints[Math.floor(Math.random() * endpoints.length)] as string;
      return send('GET', `/v1/analytics/${PROJECT_ID}/${endpoint}?${RANGE}`);
    });
    expect(seen.filter((status) => status !== 200)).toEqual([]);
    // Over the limit on any of them, with the analytics error body (the spec declares no 429).
    expectRateLimitBody(await send('GET', analyticsPath('feedback', RANGE)));
    expectRateLimitBody(await send('GET', visitorsPath(RANGE)));
    now += 3_600_000;
    expect((await send('GET', visitorsPath(RANGE))).status).toBe(200);
  });

  it('5 preview deployments a minute', async () => {
    const ask = () => send('POST', `/v1/project/preview/${PROJECT_ID}`, { branch: 'mintlify/job-1' });
    expect(await statuses(5, ask)).toEqual([202, 202, 202, 202, 202]);
    const over = await ask();
    expect(over).toMatchObject({ status: 429, body: { error: expect.stringContaining('5 preview') } });
    now += 60_000;
    expect((await ask()).status).toBe(202);
  });
});

describe('the Mintlify fake checks every answer it gives against the spec', () => {
  const startChecked = (options: Partial<MintlifyFakeOptions> = {}) =>
    startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID, ...options });
  const request = async (target: MintlifyFake, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${target.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  /** Asks `target` to deploy a preview: its answer, and a read of that deployment's status. */
  const askPreview = async (target: MintlifyFake) => {
    const asked = await request(target, 'POST', `/v1/project/preview/${PROJECT_ID}`, { branch: 'b' });
    const { statusId } = asked.body as { statusId: string };
    return { asked, statusId, read: () => request(target, 'GET', `/v1/project/update-status/${statusId}`) };
  };

  it('a job the spec forbids is answered 500, recorded, and makes close() throw', async () => {
    const checked = await startChecked();
    const job = checked.setJob('job-drift', {});
    // Past setJob, which refuses it: a field Mintlify's AgentJob does not list.
    checked.jobs.set('job-drift', { ...job, title: 'not in the spec' } as AgentJob);

    const read = await request(checked, 'GET', jobPath('job-drift'));
    checked.takeUpFollowUpsLater();
    const followUp = await request(checked, 'POST', `${jobPath('job-drift')}/message`, { prompt: 'More' });

    expect([read.status, followUp.status]).toEqual([500, 500]);
    expect(checked.violations).toEqual([
      expect.stringMatching(/^getJob GET \/v2\/agent\/.* answered 200, which breaks admin GET .*\(title\)/),
      expect.stringMatching(
        /^sendMessage POST .* answered 200, which breaks admin POST .*\/message 200.*\(title\)/,
      ),
    ]);
    await expect(checked.close()).rejects.toThrow(
      /2 answer\(s\) its spec does not allow[\s\S]*getJob[\s\S]*sendMessage/,
    );
  });

  it('answers checked and refused: a listener sees the 500 that went out', async () => {
    const checked = await startChecked();
    const seen: number[] = [];
    checked.onAnswer((_, answer) => seen.push(answer.status));
    checked.deployments.set('status-x', {
      statusId: 'status-x',
      branch: 'mintlify/job-1',
      previewUrl: 'https://acme.mintlify.app',
      status: 'done' as DeploymentState,
      createdAt: '2025-01-02T10:00:00.000Z',
    });
    const read = await request(checked, 'GET', '/v1/project/update-status/status-x');
    expect([read.status, seen]).toEqual([500, [500]]);
    expect(checked.takeViolations()).toEqual([
      expect.stringMatching(
        /deploymentStatus .*answered 200, .*\/status must be equal to one of the allowed values/,
      ),
    ]);
    await checked.close();
  });

  it('data a test sets is refused when the spec does not allow it', async () => {
    const checked = await startChecked();
    const extraField = { title: 'not in the spec' } as Partial<AgentJob>;
    expect(() => checked.setJob('job-1', extraField)).toThrow(/setJob\(job-1\).*\(title\)/);
    expect(() => checked.setJob('job-1', { createdAt: 'yesterday' })).toThrow(
      /\/createdAt must match format/,
    );
    expect(() => checked.setVisitors([{ path: '/a', human: 1, total: 1 } as VisitorsRow])).toThrow(
      /setVisitors.*\/visitors\/0 must have required property 'ai'/,
    );
    expect(() => checked.setSearches([], 2.5)).toThrow(/setSearches.*\/totalSearches must be integer/);
    const conversation = {
      id: 'c',
      timestamp: '2025-01-02T12:00:00Z',
      query: 'q',
      response: 'r',
      sources: [],
      resolutionStatus: 'maybe',
      queryCategory: null,
      pageUrl: null,
    } as unknown as FakeConversation;
    expect(() => checked.setConversations([conversation])).toThrow(/setConversations.*resolutionStatus/);
    const entry = { id: 'f', path: '/a', comment: null, createdAt: null, source: 'email', status: 'pending' };
    expect(() => checked.setFeedback([entry])).toThrow(/setFeedback/);
    expect(checked.jobs.size).toBe(0);
    await checked.close();
  });

  it('the check refuses each drift the fake could make, and statuses no spec documents', () => {
    const refused = (operation: FakeOperation, status: number, body: unknown) => {
      const check = checkFakeAnswer(operation, status, body);
      expect(check.ok, `${operation} ${status} ${JSON.stringify(body)}`).toBe(false);
      return check.errors.join('; ');
    };
    // Bodies of statuses the operation does not declare go through the spec's error body.
    expect(refused('createJob', 403, { error: 'no access', project: 'other' })).toMatch(/\(project\)/);
    expect(refused('deploymentStatus', 404, { message: 'Status not found' })).toMatch(/\(message\)/);
    expect(refused('deployPreview', 429, { error: 5 })).toMatch(/\/error must be string/);
    expect(refused('visitors', 429, { message: 'slow down' })).toMatch(/required property 'error'/);
    // A follow-up's answer is the declared AgentJob, field for field.
    const job = { id: 'job-1', status: 'active', prLink: null, queuedAt: '2025-01-02T10:00:00Z' };
    expect(refused('sendMessage', 200, job)).toMatch(/\(queuedAt\)/);
    // Statuses neither declared for the operation nor documented for it.
    for (const [operation, status] of [
      ['createJob', 404],
      ['getJob', 429],
      ['deploymentStatus', 429],
      ['deployPreview', 404],
      ['visitors', 404],
      ['sendMessage', 500],
    ] as const) {
      expect(refused(operation, status, { error: 'x' })).toMatch(
        /neither declared by the spec nor documented/,
      );
    }
    // And what is allowed passes.
    expect(checkFakeAnswer('createJob', 403, { error: 'API key has no access to this project' }).ok).toBe(
      true,
    );
    expect(checkFakeAnswer('deploymentStatus', 404, { error: 'Status not found' }).ok).toBe(true);
    expect(checkFakeAnswer('deployPreview', 429, { error: 'Rate limit exceeded' }).ok).toBe(true);
  });

  it('a request for no operation of the specs is a violation too', async () => {
    const checked = await startChecked();
    const answer = await request(checked, 'GET', `/v2/agent/${PROJECT_ID}/jobs`);
    expect(answer.status).toBe(500);
    expect(checked.takeViolations()).toEqual([
      expect.stringMatching(
        /GET \/v2\/agent\/proj-contract\/jobs answered 404: the specs have no such operation/,
      ),
    ]);
    await checked.close();
  });

  it('the answers of the sandbox and the digest no case above provokes: visitors of one week, feedback by page asked for a cursor, a deployment that ends by itself', async () => {
    const checked = await startChecked({ previewDeployMs: 50 });
    checked.setVisitors([{ path: '/this-week', human: 3, ai: 1, total: 4 }]);
    checked.setVisitorsOf('2026-11-09', [{ path: '/last-week', human: 2, ai: 0, total: 2 }], {
      human: 2,
      ai: 0,
      total: 2,
    });
    const lastWeek = await request(
      checked,
      'GET',
      `/v1/analytics/${PROJECT_ID}/visitors?dateFrom=2026-11-09&dateTo=2026-11-16`,
    );
    const thisWeek = await request(
      checked,
      'GET',
      `/v1/analytics/${PROJECT_ID}/visitors?dateFrom=2026-11-16&dateTo=2026-11-23`,
    );
    const walked = await Promise.all(
      ['cursor=abc', 'offset=10'].map((extra) =>
        request(checked, 'GET', `/v1/analytics/${PROJECT_ID}/feedback/by-page?${RANGE}&${extra}`),
      ),
    );
    expect([lastWeek.status, thisWeek.status, ...walked.map(({ status }) => status)]).toEqual([
      200, 200, 400, 400,
    ]);
    expect(lastWeek.body).toMatchObject({ visitors: [{ path: '/last-week' }], totals: { total: 2 } });
    expect(thisWeek.body).toMatchObject({ visitors: [{ path: '/this-week' }], totals: { total: 4 } });
    for (const answer of [lastWeek, thisWeek]) expectDeclared('analytics', 'GET', VISITORS, answer);
    for (const answer of walked) expectDeclared('analytics', 'GET', FEEDBACK_BY_PAGE, answer);

    // previewDeployMs (the sandbox): in progress at once, then a success that ends by itself.
    const { asked, read } = await askPreview(checked);
    const working = await read();
    expect(working.body).toMatchObject({ status: 'in_progress' });
    await expect.poll(async () => ((await read()).body as { status: string }).status).toBe('success');
    expectDeclared('deploy', 'POST', PREVIEW, asked);
    for (const answer of [working, await read()]) expectDeclared('deploy', 'GET', STATUS, answer);
    await checked.close();
  });

  it('a job is created at the time of the fake’s clock, as its deployments are', async () => {
    const now = Date.parse('2026-11-23T09:00:00Z');
    const checked = await startChecked({ now: () => now });
    const created = await request(checked, 'POST', `/v2/agent/${PROJECT_ID}/job`, { prompt: 'When?' });
    const deployment = await (await askPreview(checked)).read();
    expect(deployment.body).toMatchObject({ createdAt: '2026-11-23T09:00:00.000Z' });
    expect(created.body).toMatchObject({ createdAt: '2026-11-23T09:00:00.000Z' });
    await checked.close();
  });

  it('a deployment keeps the times it was asked for and ended', async () => {
    let now = Date.parse('2026-11-23T09:00:00Z');
    const checked = await startChecked({ now: () => now });
    const deployment = await askPreview(checked);
    const { statusId } = deployment;
    const read = async () => (await deployment.read()).body as { createdAt: string; endedAt?: string };
    now += 5_000;
    const queued = await read();
    now += 5_000;
    checked.setDeployment(statusId, { status: 'success', summary: 'Deployed' });
    now += 5_000;
    const ended = await read();
    now += 5_000;
    const later = await read();
    expect(queued).toMatchObject({ createdAt: '2026-11-23T09:00:00.000Z' });
    expect(queued.endedAt).toBeUndefined();
    expect(ended).toMatchObject({
      createdAt: '2026-11-23T09:00:00.000Z',
      endedAt: '2026-11-23T09:00:10.000Z',
    });
    expect(later).toEqual(ended);
    checked.setDeployment(statusId, { status: 'in_progress' });
    expect((await read()).endedAt).toBeUndefined();
    await checked.close();
  });
});

describe('the Mintlify fake counts an agent use only for a create or follow-up it carries out', () => {
  it('invalid prompts, unknown jobs, other projects and wrong keys do not count; creates and follow-ups share one count', async () => {
    const counted = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID });
    const post = async (path: string, body: unknown, key = API_KEY) =>
      (
        await fetch(`${counted.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).status;
    const create = `/v2/agent/${PROJECT_ID}/job`;
    const refusedStatuses: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      refusedStatuses.push(
        await post(create, { prompt: '' }),
        await post(`${jobPath('nope')}/message`, { prompt: 'x' }),
        await post('/v2/agent/other-project/job', { prompt: 'x' }),
        await post(create, { prompt: 'x' }, 'mint_wrong'),
      );
    }
    expect(new Set(refusedStatuses)).toEqual(new Set([400, 404, 403, 401]));
    counted.setJob('job-1', { status: 'completed' });
    const uses: number[] = [];
    for (let i = 0; i < 50; i += 1) uses.push(await post(create, { prompt: 'x' }));
    for (let i = 0; i < 50; i += 1) uses.push(await post(`${jobPath('job-1')}/message`, { prompt: 'y' }));
    expect(uses.filter((status) => status !== 201 && status !== 200)).toEqual([]);
    expect(await post(`${jobPath('job-1')}/message`, { prompt: 'one too many' })).toBe(429);
    // Over the limit, an invalid request is still refused for what it is.
    expect(await post(create, { prompt: '' })).toBe(400);
    await counted.close();
  });
});
