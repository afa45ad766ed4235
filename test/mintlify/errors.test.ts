import { Agent, errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { operatorHint, startFailureText } from '../../src/jobs/jobAnswers.js';
import {
  ConnectionError,
  didNothing,
  ForbiddenError,
  InvalidRequestError,
  type MintlifyError,
  NotFoundError,
  RateLimitedError,
  RedirectedError,
  SchemaError,
  ServiceError,
  TimeoutError,
  UnauthorizedError,
  UnexpectedStatusError,
} from '../../src/mintlify/index.js';
import {
  API_KEY,
  closedPort,
  failureOf,
  fakeAndClient,
  newClient,
  onCleanup,
  PROJECT_ID,
} from './clientHarness.js';

const visitorsQuery = { dateFrom: '2025-01-01', dateTo: '2025-01-08' };
const noRetries = { retry: { maxAttempts: 1 } };

/** The key must not leak through any text an operator might log. */
function expectNoKey(error: Error, key = API_KEY): void {
  const texts = [error.message, error.stack ?? '', JSON.stringify(error), String(error.cause ?? '')];
  for (const text of texts) expect(text).not.toContain(key);
}

describe('each failure becomes its own error class', () => {
  it('400: the service message and the validation details', async () => {
    const { client } = await fakeAndClient();

    const emptyPrompt = await failureOf(client.createJob(PROJECT_ID, ''));
    const badLimit = await failureOf(client.visitorsPage(PROJECT_ID, { ...visitorsQuery, limit: 500 }));

    expect(emptyPrompt).toBeInstanceOf(InvalidRequestError);
    expect(emptyPrompt).toMatchObject({ kind: 'invalid_request', status: 400, operation: 'createJob' });
    expect((emptyPrompt as InvalidRequestError).serviceMessage).toMatch(/prompt/);
    expect(badLimit).toMatchObject({
      kind: 'invalid_request',
      serviceMessage: 'Invalid query parameters',
      details: ['limit must be an integer from 1 to 250'],
    });
    expect(badLimit.message).toContain('limit must be an integer from 1 to 250');
  });

  it('401: a wrong or expired key, without repeating the key', async () => {
    const { fake } = await fakeAndClient();
    const wrongKey = 'mint_wrong_key_9a8b7c6d';
    const { client } = newClient(fake.url, { apiKey: wrongKey });

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ kind: 'unauthorized', status: 401, operation: 'getJob' });
    expect(error.message).toMatch(/wrong or expired/);
    expectNoKey(error, wrongKey);
    expect(fake.requests).toHaveLength(1);
  });

  it('403: names the scope the method needs', async () => {
    const { fake, client } = await fakeAndClient();
    fake.injectFault(() => true, { status: 403 }, 2);

    const post = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const get = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(post).toBeInstanceOf(ForbiddenError);
    expect(post).toMatchObject({ kind: 'forbidden', status: 403, neededScope: 'write' });
    expect(get).toMatchObject({ kind: 'forbidden', neededScope: 'read' });
    expect(post.message).toMatch(/allowlist/);
  });

  it('404: an unknown job', async () => {
    const { client } = await fakeAndClient();

    const get = await failureOf(client.getJob(PROJECT_ID, 'nope'));
    const message = await failureOf(client.sendMessage(PROJECT_ID, 'nope', 'hello'));

    expect(get).toBeInstanceOf(NotFoundError);
    expect(get).toMatchObject({ kind: 'not_found', status: 404, serviceMessage: 'Job not found' });
    expect(message).toBeInstanceOf(NotFoundError);
  });

  it('429: Retry-After in seconds, as an HTTP-date, or missing', async () => {
    const { fake, client } = await fakeAndClient();
    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    fake.injectFault('createJob', { status: 429, retryAfter: '90' });
    fake.injectFault('createJob', { status: 429, retryAfter: inTwoMinutes });
    fake.injectFault('createJob', { status: 429 });

    const seconds = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const date = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const missing = await failureOf(client.createJob(PROJECT_ID, 'x'));

    expect(seconds).toBeInstanceOf(RateLimitedError);
    expect(seconds).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 90_000 });
    const dateWait = (date as RateLimitedError).retryAfterMs ?? 0;
    expect(dateWait).toBeGreaterThan(100_000);
    expect(dateWait).toBeLessThanOrEqual(120_000);
    expect(missing).toMatchObject({ kind: 'rate_limited', retryAfterMs: undefined });
  });

  it('500 and 503: a service error with its status', async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault('getJob', { status: 500 });
    fake.injectFault('visitors', { status: 503 });

    const get = await failureOf(client.getJob(PROJECT_ID, 'job-1'));
    const visitors = await failureOf(client.visitorsPage(PROJECT_ID, visitorsQuery));

    expect(get).toBeInstanceOf(ServiceError);
    expect(get).toMatchObject({ kind: 'service', status: 500 });
    expect(visitors).toMatchObject({ kind: 'service', status: 503 });
  });

  it("a proxy's HTML error page is a service error that does not quote the page", async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault('getJob', {
      status: 502,
      rawBody: '<html><body><h1>502 Bad Gateway</h1></body></html>',
    });

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toMatchObject({ kind: 'service', status: 502, serviceMessage: undefined });
    expect(error.message).toBe('getJob: Mintlify failed with 502');
  });

  it('any other 4xx (409, 413, 422, 418) is a refusal with its status and words: nothing was done', async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault('createJob', { status: 422, body: { error: `too long for ${API_KEY}` } });
    fake.injectFault('sendMessage', { status: 409, body: { error: 'job is busy' } });
    fake.injectFault('getJob', { status: 418, body: { error: 'teapot' } });
    fake.injectFault('deployPreview', { status: 413, rawBody: 'Request Entity Too Large' });

    const create = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const send = await failureOf(client.sendMessage(PROJECT_ID, 'job-1', 'x'));
    const get = await failureOf(client.getJob(PROJECT_ID, 'job-1'));
    const preview = await failureOf(client.deployPreview(PROJECT_ID, 'main'));

    expect(create).toBeInstanceOf(InvalidRequestError);
    expect(create).toMatchObject({ kind: 'invalid_request', status: 422 });
    expect((create as InvalidRequestError).serviceMessage).toBe('too long for [redacted]');
    expect(create.message).toBe('createJob: Mintlify rejected the request (422): too long for [redacted]');
    expectNoKey(create);
    expect(send).toMatchObject({ kind: 'invalid_request', status: 409, serviceMessage: 'job is busy' });
    expect(get).toMatchObject({ kind: 'invalid_request', status: 418, serviceMessage: 'teapot' });
    expect(preview).toMatchObject({ kind: 'invalid_request', status: 413 });
    expect((preview as InvalidRequestError).serviceMessage).toBe('Request Entity Too Large');
    for (const error of [create, send, get, preview]) expect(didNothing(error)).toBe(true);
  });

  it('a redirect is not followed (the key would go along): nothing was done, and where it pointed is kept', async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault('createJob', {
      status: 301,
      headers: { location: 'https://www.mintlify.com/v2/agent' },
      rawBody: '<html>Moved</html>',
    });
    fake.injectFault('getJob', { status: 307 });

    const create = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const get = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(create).toBeInstanceOf(RedirectedError);
    expect(create).toMatchObject({
      kind: 'redirected',
      status: 301,
      location: 'https://www.mintlify.com/v2/agent',
    });
    expect(create.message).toContain('redirect (301 to https://www.mintlify.com/v2/agent)');
    expect(get).toMatchObject({ kind: 'redirected', status: 307, location: undefined });
    expect(didNothing(create)).toBe(true);
    expect(fake.requestsFor('createJob')).toHaveLength(1);
  });

  it('any other status is unexpected, and may have been acted on (408, 303)', async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault('createJob', { status: 408, body: { error: 'request timeout' } });
    fake.injectFault('sendMessage', { status: 303 });

    const create = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const send = await failureOf(client.sendMessage(PROJECT_ID, 'job-1', 'x'));

    expect(create).toBeInstanceOf(UnexpectedStatusError);
    expect(create).toMatchObject({
      kind: 'unexpected_status',
      status: 408,
      serviceMessage: 'request timeout',
    });
    expect(send).toMatchObject({ kind: 'unexpected_status', status: 303 });
    expect(didNothing(create)).toBe(false);
    expect(didNothing(send)).toBe(false);
  });

  it('timeouts: waiting for headers, and a body that stalls', async () => {
    const { fake, client } = await fakeAndClient({ ...noRetries, timeouts: { headersMs: 50, bodyMs: 50 } });
    fake.setJob('slow-headers', {});
    fake.setJob('slow-body', {});
    fake.injectFault((request) => request.path.endsWith('/slow-headers'), { delayMs: 5_000 });
    fake.injectFault((request) => request.path.endsWith('/slow-body'), { delayMs: 5_000, phase: 'body' });

    // In parallel: undici checks these timeouts on a coarse (~1 s) clock.
    const [headers, body] = await Promise.all([
      failureOf(client.getJob(PROJECT_ID, 'slow-headers')),
      failureOf(client.getJob(PROJECT_ID, 'slow-body')),
    ]);

    expect(headers).toBeInstanceOf(TimeoutError);
    expect(headers).toMatchObject({
      kind: 'timeout',
      phase: 'headers',
      timeoutMs: 50,
      mayHaveReachedService: true,
    });
    expect(body).toMatchObject({
      kind: 'timeout',
      phase: 'body',
      timeoutMs: 50,
      mayHaveReachedService: true,
    });
  });

  it('a connect timeout never reached the service', async () => {
    const neverConnects = new Agent({
      connect: (_options, callback) => callback(new undiciErrors.ConnectTimeoutError(), null),
    });
    onCleanup(() => neverConnects.close());
    const { client } = newClient('http://127.0.0.1:9', { ...noRetries, dispatcher: neverConnects });

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toMatchObject({ kind: 'timeout', phase: 'connect', mayHaveReachedService: false });
  });

  it('connection refused: a connection error that was never sent', async () => {
    const { client } = newClient(`http://127.0.0.1:${await closedPort()}`, noRetries);

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ kind: 'connection', code: 'ECONNREFUSED', mayHaveReachedService: false });
  });

  it('a key HTTP cannot carry: the request was never sent, and the error says so', async () => {
    // The config refuses such a key; should one come another way, undici refuses the
    // Authorization header before any connection (UND_ERR_INVALID_ARG).
    const { fake } = await fakeAndClient();
    const waits: number[] = [];
    const { client } = newClient(fake.url, {
      apiKey: `${API_KEY}\u200b`,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));
    const read = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(fake.requests).toHaveLength(0);
    expect(waits).toEqual([]); // the same request would fail the same: not tried again
    expect(read).toMatchObject({ kind: 'connection', mayHaveReachedService: false });
    expect(operatorHint(error)).toContain('invalid authorization header');
    expectNoKey(error);
    // Told as never sent: not "It may have started anyway: check the docs repository".
    expect(didNothing(error)).toBe(true);
    expect(startFailureText(error, undefined, new Date())).not.toContain('may have started anyway');
    // The operator's log points at the key, not at "the connection broke after the request was sent".
    expect(`${error.message}${operatorHint(error)}`).toContain('MINTLIFY_API_KEY');
  });

  it('a 2xx body that is not JSON or breaks the schema is a SchemaError', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { malformedJson: true });
    fake.injectFault('getJob', { schemaBreaking: true });
    fake.injectFault('visitors', { schemaBreaking: true });

    const malformed = await failureOf(client.getJob(PROJECT_ID, 'job-1'));
    const badStatus = await failureOf(client.getJob(PROJECT_ID, 'job-1'));
    const badPage = await failureOf(client.visitorsPage(PROJECT_ID, visitorsQuery));

    expect(malformed).toBeInstanceOf(SchemaError);
    expect(malformed).toMatchObject({ kind: 'schema', status: 200, problems: ['the body is not JSON'] });
    expect(badStatus).toMatchObject({ kind: 'schema', operation: 'getJob' });
    expect(badStatus.message).toMatch(/^getJob: .*status: /);
    expect(badPage.message).toMatch(/hasMore: .*boolean/);
  });

  it('a huge broken body is summarised, not copied into the error', async () => {
    const { fake, client } = await fakeAndClient();
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ path: `/p${i}`, human: 'many' }));
    fake.injectFault('visitors', { status: 200, body: { totals: {}, visitors: rows, hasMore: false } });

    const error = await failureOf(client.visitorsPage(PROJECT_ID, visitorsQuery));

    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message.length).toBeLessThan(1_000);
    expect(error.message).toMatch(/and \d+ more$/);
    expect((error as SchemaError).bodySnippet.length).toBeLessThan(600);
  });

  it('never shows the API key, even when the service echoes it back', async () => {
    const { fake, client } = await fakeAndClient(noRetries);
    fake.injectFault(() => true, {
      status: 400,
      body: { error: `bad key ${API_KEY}`, details: [{ message: API_KEY }] },
    });
    fake.injectFault(() => true, { status: 503, body: { error: `upstream saw ${API_KEY}` } });
    fake.injectFault(() => true, { status: 200, body: { status: 42, model: API_KEY } });
    fake.injectFault(() => true, { status: 200, rawBody: `{"id": "${API_KEY}` });
    fake.injectFault(() => true, { destroySocket: true });

    const failures = [
      await failureOf(client.createJob(PROJECT_ID, 'x')),
      await failureOf(client.getJob(PROJECT_ID, 'job-1')),
      await failureOf(client.getJob(PROJECT_ID, 'job-1')),
      await failureOf(client.getJob(PROJECT_ID, 'job-1')),
      await failureOf(client.createJob(PROJECT_ID, 'x')),
    ];

    expect(failures.map((error) => (error as MintlifyError).kind)).toEqual([
      'invalid_request',
      'service',
      'schema',
      'schema',
      'connection',
    ]);
    for (const error of failures) expectNoKey(error);
    expect(failures[0]?.message).toContain('[redacted]');
  });
});
