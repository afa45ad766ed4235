/**
 * Every kind of answer the Mintlify fake gives must be one the published specs allow, so tests
 * that pass against the fake say something about the real service. Requests go over raw HTTP:
 * the client would turn error bodies into exceptions before we could check them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SpecName, validateComponent, validateResponse } from './openapi.js';

const API_KEY = 'mint_contract_key';
const PROJECT_ID = 'proj-contract';
const CREATE = '/v2/agent/{projectId}/job';
const GET = '/v2/agent/{projectId}/job/{id}';
const MESSAGE = '/v2/agent/{projectId}/job/{id}/message';
const VISITORS = '/v1/analytics/{projectId}/visitors';
// The deployments spec's server is https://api.mintlify.com/v1: its paths start after /v1.
const PREVIEW = '/project/preview/{projectId}';
const STATUS = '/project/update-status/{statusId}';

let fake: MintlifyFake;
beforeAll(async () => {
  fake = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID });
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

  it('the helper applies OpenAPI 3.0 nullable only where the spec says so', () => {
    expectValid(
      validateComponent('admin', 'AgentJob', { prLink: null, archivedAt: null, source: { ref: null } }),
    );
    expect(validateComponent('admin', 'AgentJob', { id: null }).valid).toBe(false);
    expect(validateComponent('admin', 'AgentJob', { prLink: 'not a uri' }).valid).toBe(false);
  });
});
