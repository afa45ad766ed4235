import { setTimeout as sleepFor } from 'node:timers/promises';
import { Agent, buildConnector, errors as undiciErrors } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import {
  ConnectionError,
  didNothing,
  MintlifyClient,
  RateLimitedError,
  ServiceError,
} from '../../src/mintlify/index.js';
import { followUpFailureText, startFailureText } from '../../src/jobs/jobAnswers.js';
import type { MintlifyFake } from '../fakes/mintlifyFake.js';
import {
  API_KEY,
  closedPort,
  failureOf,
  fakeAndClient,
  newClient,
  onCleanup,
  PROJECT_ID,
  startFake,
} from './clientHarness.js';

describe('reads are retried when a second try can help', () => {
  it('a GET answered 503 then 200 succeeds on the second request', async () => {
    const { fake, client, sleeps } = await fakeAndClient();
    fake.setJob('job-1', { status: 'completed' });
    fake.injectFault('getJob', { status: 503 });

    const job = await client.getJob(PROJECT_ID, 'job-1');

    expect(job.status).toBe('completed');
    expect(fake.requestsFor('getJob')).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
  });

  it('a 429 waits as long as Retry-After says', async () => {
    const { fake, client, sleeps } = await fakeAndClient({ retry: { maxDelayMs: 10_000 } });
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { status: 429, retryAfter: '3' });

    await client.getJob(PROJECT_ID, 'job-1');

    expect(sleeps).toEqual([3_000]);
    expect(fake.requestsFor('getJob')).toHaveLength(2);
  });

  it('a 503 with Retry-After (a service down for maintenance) waits as long as it says, too', async () => {
    const { fake, client, sleeps } = await fakeAndClient({ retry: { maxDelayMs: 10_000 } });
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { status: 503, retryAfter: '3' });

    await client.getJob(PROJECT_ID, 'job-1');

    expect(sleeps).toEqual([3_000]);
    expect(fake.requestsFor('getJob')).toHaveLength(2);
  });

  it('a 429 asking for a longer wait than the client retries for goes to the caller, not asked again early', async () => {
    const { fake, client, sleeps } = await fakeAndClient({ retry: { maxDelayMs: 10_000 } });
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { status: 429, retryAfter: '3600' });

    await expect(client.getJob(PROJECT_ID, 'job-1')).rejects.toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 3_600_000,
    });
    expect(sleeps).toEqual([]);
    expect(fake.requestsFor('getJob')).toHaveLength(1);
  });

  it('a 429 asking for a longer wait than one retry may take goes to the caller, though the time budget would allow it', async () => {
    const { fake, client, sleeps } = await fakeAndClient({
      retry: { maxDelayMs: 10_000, maxElapsedMs: 60_000 },
    });
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { status: 429, retryAfter: '20' });

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toMatchObject({ kind: 'rate_limited', retryAfterMs: 20_000 });
    expect(sleeps).toEqual([]);
    expect(fake.requestsFor('getJob')).toHaveLength(1);
  });

  it('timeouts and cut connections are retried for reads', async () => {
    const { fake, client } = await fakeAndClient({ timeouts: { headersMs: 500 } });
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { destroySocket: true });
    fake.injectFault('getJob', { delayMs: 5_000 });

    const job = await client.getJob(PROJECT_ID, 'job-1');

    expect(job.id).toBe('job-1');
    expect(fake.requestsFor('getJob')).toHaveLength(3);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 3, baseDelayMs: 1 } });
    fake.injectFault('getJob', { status: 503 }, 100);

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toBeInstanceOf(ServiceError);
    expect(fake.requestsFor('getJob')).toHaveLength(3);
  });

  it('retries for its time budget, then gives up rather than wait past it', async () => {
    // The budget is read on the clock: here only the waits move it, so the waits are all the time
    // spent, and no real second passes.
    vi.useFakeTimers({ toFake: ['Date'] });
    onCleanup(async () => void vi.useRealTimers());
    const waited: number[] = [];
    const { fake, client } = await fakeAndClient({
      retry: { maxAttempts: 1_000, baseDelayMs: 40, maxDelayMs: 40, maxElapsedMs: 1_000 },
      sleep: async (ms) => {
        waited.push(ms);
        vi.setSystemTime(Date.now() + ms);
      },
    });
    fake.injectFault('getJob', { status: 503 }, 1_000);

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toBeInstanceOf(ServiceError);
    const spent = waited.reduce((sum, ms) => sum + ms, 0);
    // No wait ends past the 1-s budget...
    expect(spent).toBeLessThanOrEqual(1_000);
    // ...and it gave up only when the next wait (under 40 ms) could: far short of 1,000 attempts.
    expect(spent).toBeGreaterThan(1_000 - 40);
    expect(fake.requestsFor('getJob')).toHaveLength(waited.length + 1);
    expect(fake.requestsFor('getJob').length).toBeLessThan(1_000);
  });

  it('a Retry-After longer than the remaining budget ends the retries at once', async () => {
    const { fake, client, sleeps } = await fakeAndClient({
      retry: { maxDelayMs: 60_000, maxElapsedMs: 30_000 },
    });
    fake.injectFault('getJob', { status: 429, retryAfter: '45' });

    const error = await failureOf(client.getJob(PROJECT_ID, 'job-1'));

    expect(error).toMatchObject({ kind: 'rate_limited', retryAfterMs: 45_000 });
    expect(sleeps).toEqual([]);
    expect(fake.requestsFor('getJob')).toHaveLength(1);
  });

  it('client errors (404) are not retried', async () => {
    const { fake, client } = await fakeAndClient();

    await failureOf(client.getJob(PROJECT_ID, 'unknown'));

    expect(fake.requestsFor('getJob')).toHaveLength(1);
  });
});

describe('a POST that may have reached Mintlify is sent once', () => {
  it('a create answered 503 is not repeated', async () => {
    const { fake, client } = await fakeAndClient();
    fake.injectFault('createJob', { status: 503 });

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));

    expect(error).toBeInstanceOf(ServiceError);
    expect(fake.requestsFor('createJob')).toHaveLength(1);
  });

  it('an analytics read answered 429 goes straight to the caller: each try spends the organization’s hourly 100', async () => {
    const { fake, client, sleeps } = await fakeAndClient({ retry: { maxDelayMs: 10_000 } });
    fake.injectFault('visitors', { status: 429 });
    fake.injectFault('feedbackByPage', { status: 429, retryAfter: '3' });
    const range = { dateFrom: '2026-11-16', dateTo: '2026-11-22' };

    expect(await failureOf(client.visitorsPage(PROJECT_ID, range))).toBeInstanceOf(RateLimitedError);
    expect(await failureOf(client.feedbackByPage(PROJECT_ID, range))).toMatchObject({ retryAfterMs: 3_000 });
    expect(fake.requestsFor('visitors')).toHaveLength(1);
    expect(fake.requestsFor('feedbackByPage')).toHaveLength(1);
    expect(sleeps).toEqual([]);
    // A 5xx is still worth a second try, and only one: each try is one of the hourly 100, and
    // Mintlify in trouble for longer is waited out by the digest at its own pace.
    fake.injectFault('visitors', { status: 503 });
    await client.visitorsPage(PROJECT_ID, range);
    expect(fake.requestsFor('visitors')).toHaveLength(3);
    fake.injectFault('visitors', { status: 503 }, 3);
    expect(await failureOf(client.visitorsPage(PROJECT_ID, range))).toBeInstanceOf(ServiceError);
    expect(fake.requestsFor('visitors')).toHaveLength(5);
  });

  it('a follow-up answered 429 goes straight to the caller', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setJob('job-1', {});
    fake.injectFault('sendMessage', { status: 429, retryAfter: '1' });

    const error = await failureOf(client.sendMessage(PROJECT_ID, 'job-1', 'x'));

    expect(error).toBeInstanceOf(RateLimitedError);
    expect(fake.requestsFor('sendMessage')).toHaveLength(1);
  });

  it('a create whose headers time out is not repeated', async () => {
    const { fake, client } = await fakeAndClient({ timeouts: { headersMs: 500 } });
    fake.injectFault('createJob', { delayMs: 5_000 });

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));

    expect(error).toMatchObject({ kind: 'timeout', phase: 'headers', mayHaveReachedService: true });
    expect(fake.requestsFor('createJob')).toHaveLength(1);
  });

  it('a create whose connection is cut after sending is not repeated, though the job exists', async () => {
    const { fake, client } = await fakeAndClient();
    fake.injectFault('createJob', { destroySocket: true });

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));

    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ kind: 'connection', mayHaveReachedService: true });
    expect(fake.requestsFor('createJob')).toHaveLength(1);
    expect(fake.jobs.size).toBe(1);
  });

  it('a create refused before sending is retried once the service is up', async () => {
    const port = await closedPort();
    let fake: MintlifyFake | undefined;
    const { client } = newClient(`http://127.0.0.1:${port}`, {
      // The first attempt finds nobody listening; the service comes up during the backoff.
      sleep: async () => {
        fake ??= await startFake({ port });
      },
    });

    const job = await client.createJob(PROJECT_ID, 'x');

    expect(job.status).toBe('active');
    expect(fake?.requestsFor('createJob')).toHaveLength(1);
  });

  it('a create whose wait before its retry is cut by the bot stopping still says nothing was sent', async () => {
    // The worker's sleep listens to the stop (worker.ts: sleepFor with the retryWaits signal): once the
    // stop's grace ends, the wait rejects with the signal's reason.
    const port = await closedPort();
    const stopping = new AbortController();
    stopping.abort(new Error('the bot is stopping'));
    const { client } = newClient(`http://127.0.0.1:${port}`, {
      sleep: (ms) => sleepFor(ms, undefined, { signal: stopping.signal }),
    });

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));

    // Mintlify never saw the request: the caller must be able to tell (didNothing), or it says
    // "something went wrong on my side", and a follow-up is followed as if the job had taken it.
    expect(error).toMatchObject({ kind: 'connection', mayHaveReachedService: false });
    expect(didNothing(error)).toBe(true);
    expect(startFailureText(error, undefined, new Date())).toContain('Nothing was sent');
    expect(followUpFailureText(error, undefined, new Date())).toContain('Nothing was sent');
  });

  it('at the stop, a slow read is cut (it is asked again later) while a slow create is left to its answer', async () => {
    const fake = await startFake();
    fake.setJob('job-1', {});
    fake.injectFault('getJob', { delayMs: 5_000 });
    fake.injectFault('createJob', { delayMs: 500 });
    const stopping = new AbortController();
    const { client } = newClient(fake.url, {
      stopping: stopping.signal,
      sleep: (ms) => sleepFor(ms, undefined, { signal: stopping.signal }),
    });

    const read = failureOf(client.getJob(PROJECT_ID, 'job-1'));
    const create = client.createJob(PROJECT_ID, 'x');
    await expect.poll(() => fake.requestsFor('createJob').length).toBe(1);
    const cutAt = Date.now();
    stopping.abort(new Error('the bot is stopping'));

    expect(await read).toMatchObject({ kind: 'connection' });
    expect(Date.now() - cutAt).toBeLessThan(1_000);
    expect(fake.requestsFor('getJob')).toHaveLength(1); // not asked again once stopping
    await expect(create).resolves.toMatchObject({ id: expect.any(String) });
  });

  it('a create asked for after close() (work the stop left running) says it was never sent', async () => {
    const fake = await startFake();
    // Made here, not by the harness, whose cleanup would close it a second time.
    const client = new MintlifyClient({ apiKey: API_KEY, baseUrl: fake.url, userAgent: 'test' });
    await client.close();

    const error = await failureOf(client.createJob(PROJECT_ID, 'x'));

    expect(fake.requestsFor('createJob')).toHaveLength(0);
    expect(error).toMatchObject({ kind: 'connection', mayHaveReachedService: false });
    expect(didNothing(error)).toBe(true);
  });

  it('a create whose connect timed out is retried', async () => {
    const fake = await startFake();
    const connect = buildConnector({});
    let connects = 0;
    const firstConnectTimesOut = new Agent({
      connect: (options, callback) => {
        connects += 1;
        if (connects === 1) callback(new undiciErrors.ConnectTimeoutError(), null);
        else connect(options, callback);
      },
    });
    onCleanup(() => firstConnectTimesOut.close());
    const { client } = newClient(fake.url, { dispatcher: firstConnectTimesOut });

    await client.createJob(PROJECT_ID, 'x');

    expect(connects).toBe(2);
    expect(fake.requestsFor('createJob')).toHaveLength(1);
    expect(fake.requestsFor('createJob')[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });
});
