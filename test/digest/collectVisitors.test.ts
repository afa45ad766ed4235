import { setTimeout as sleepFor } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  type CollectOptions,
  collectVisitors,
  DigestGaveUpError,
  type ReadProgress,
  readSiteTotals,
} from '../../src/digest/collectVisitors.js';
import { InvalidRequestError, RateLimitedError, ServiceError } from '../../src/mintlify/index.js';
import { failureOf, fakeAndClient, PROJECT_ID } from '../mintlify/clientHarness.js';
import { visitorsRows } from '../support/visitors.js';

const period = { dateFrom: '2025-03-10', dateTo: '2025-03-17' };

/** Rows in no particular order; `/page-7` has the most visitors, several pages tie. */
const rows = (count: number) => visitorsRows(count, { peak: 7 });

/** A clock the waits move forward, so the give-up bound is tested without real waiting. */
function virtualTime() {
  let now = 0;
  const waits: number[] = [];
  const options: Pick<CollectOptions, 'sleep' | 'now'> = {
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
  return { options, waits };
}

/** A reading given an hour, on a virtual clock; a scheduled digest's also waits out Mintlify's trouble. */
const anHour = (
  time: ReturnType<typeof virtualTime>,
  more: Pick<CollectOptions, 'waitOutTrouble'> = {},
): CollectOptions => ({ top: 3, maxPages: 100, giveUpMs: 3_600_000, ...more, ...time.options });

const offsetsAsked = (fake: { requestsFor: (op: 'visitors') => Array<{ query: Record<string, string> }> }) =>
  fake.requestsFor('visitors').map((request) => Number(request.query.offset));

describe('collecting a period’s visitors', () => {
  it('reads every offset exactly once, 250 rows at a time, and stops on the short last page', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(600), { human: 9_000, ai: 700, total: 9_500 });

    const numbers = await collectVisitors(client, PROJECT_ID, period, {
      top: 3,
      maxPages: 100,
      giveUpMs: 1_000,
    });

    expect(fake.requestsFor('visitors').map((request) => request.query)).toEqual(
      [0, 250, 500].map((offset) => ({ ...period, limit: '250', offset: String(offset) })),
    );
    expect(numbers).toMatchObject({
      period,
      totals: { human: 9_000, ai: 700, total: 9_500 },
      pathCount: 600,
      pagesRead: 3,
      complete: true,
    });
    const expected = rows(600)
      .sort((a, b) => b.total - a.total || (a.path < b.path ? -1 : 1))
      .slice(0, 3);
    expect(numbers.top).toEqual(expected);
    expect(numbers.top[0]?.path).toBe('/page-7');
  });

  it('an empty week is one request with zero totals and no pages', async () => {
    const { fake, client } = await fakeAndClient();

    const numbers = await collectVisitors(client, PROJECT_ID, period, {
      top: 10,
      maxPages: 100,
      giveUpMs: 1_000,
    });

    expect(numbers).toEqual({
      period,
      totals: { human: 0, ai: 0, total: 0 },
      top: [],
      pathCount: 0,
      pagesRead: 1,
      complete: true,
    });
    expect(fake.requestsFor('visitors')).toHaveLength(1);
  });

  it('stops at the page cap and says the ranking is partial', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(1_000));

    const numbers = await collectVisitors(client, PROJECT_ID, period, {
      top: 5,
      maxPages: 2,
      giveUpMs: 1_000,
    });

    expect(offsetsAsked(fake)).toEqual([0, 250]);
    expect(numbers).toMatchObject({ pagesRead: 2, pathCount: 500, complete: false });
  });

  it('on a 429 mid-way waits as asked and resumes at the same offset, never from the start', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(600));
    fake.injectFault((request) => request.query.offset === '250', { status: 429, retryAfter: '120' }, 2);
    const time = virtualTime();

    const numbers = await collectVisitors(client, PROJECT_ID, period, anHour(time));

    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250, 500]);
    expect(time.waits).toEqual([120_000, 120_000]);
    expect(numbers).toMatchObject({ pathCount: 600, complete: true });
  });

  it('without Retry-After it backs off, growing, then resumes at the same offset', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(300));
    fake.injectFault((request) => request.query.offset === '250', { status: 429 }, 3);
    const time = virtualTime();
    const told: number[] = [];

    await collectVisitors(client, PROJECT_ID, period, {
      top: 3,
      maxPages: 100,
      giveUpMs: 3_600_000,
      onRateLimited: (waitMs) => told.push(waitMs),
      ...time.options,
    });

    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250, 250]);
    expect(time.waits).toEqual([60_000, 120_000, 240_000]);
    expect(told).toEqual(time.waits);
  });

  it('backs off from a minute again after a page it could read: a later 429 is not waited for longer', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(600));
    fake.injectFault((request) => request.query.offset === '250', { status: 429 }, 2);
    fake.injectFault((request) => request.query.offset === '500', { status: 429 }, 1);
    const time = virtualTime();

    await collectVisitors(client, PROJECT_ID, period, anHour(time));

    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250, 500, 500]);
    expect(time.waits).toEqual([60_000, 120_000, 60_000]);
  });

  it('backs off the same when Retry-After asks for no wait at all', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(300));
    fake.injectFault((request) => request.query.offset === '250', { status: 429, retryAfter: '0' }, 2);
    const time = virtualTime();
    await collectVisitors(client, PROJECT_ID, period, anHour(time));
    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250]);
    expect(time.waits).toEqual([60_000, 120_000]);
  });

  it('takes an empty page as the end, whatever hasMore says: no page after page of nothing', async () => {
    const asked: number[] = [];
    const empty = { totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: true };
    const source = {
      visitorsPage: async (_project: string, query: { offset?: number }) => {
        asked.push(query.offset ?? 0);
        return empty;
      },
    };
    const numbers = await collectVisitors(source, PROJECT_ID, period, {
      top: 3,
      maxPages: 1_000,
      giveUpMs: 60_000,
    });
    expect(asked).toEqual([0]);
    expect(numbers).toMatchObject({ pagesRead: 1, pathCount: 0 });
  });

  it('gives up once the next wait would end past the bound, naming the offset it could not read', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(600));
    fake.injectFault((request) => request.query.offset === '500', { status: 429, retryAfter: '1800' }, 10);
    const time = virtualTime();

    const error = await failureOf(
      collectVisitors(client, PROJECT_ID, period, {
        top: 3,
        maxPages: 100,
        giveUpMs: 3_000_000,
        ...time.options,
      }),
    );

    expect(error).toBeInstanceOf(DigestGaveUpError);
    expect(error).toMatchObject({ offset: 500, retryAfterMs: 1_800_000 });
    expect((error as DigestGaveUpError).lastError).toBeInstanceOf(RateLimitedError);
    expect(error.message).toMatch(/gave up reading the visitors for 2025-03-10\.\.2025-03-17 at offset 500/);
    expect(time.waits).toEqual([1_800_000]);
    expect(offsetsAsked(fake)).toEqual([0, 250, 500, 500]);
  });

  it('goes on from where a read that gave up stopped: no page is read twice, and the ranking is the whole export’s', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(1_100), { human: 9_000, ai: 700, total: 9_500 });
    fake.injectFault((request) => request.query.offset === '500', { status: 429, retryAfter: '1800' }, 1);
    const kept: ReadProgress[] = [];
    const options = { top: 5, maxPages: 100, giveUpMs: 60_000, ...virtualTime().options };

    const stopped = await failureOf(
      collectVisitors(client, PROJECT_ID, period, {
        ...options,
        onPage: async (progress) => void kept.push(progress),
      }),
    );
    expect(stopped).toBeInstanceOf(DigestGaveUpError);
    const last = kept.at(-1)!;
    expect(last).toMatchObject({ offset: 500, pagesRead: 2, seen: 500 });

    const numbers = await collectVisitors(client, PROJECT_ID, period, { ...options, from: last });
    expect(offsetsAsked(fake)).toEqual([0, 250, 500, 500, 750, 1_000]);
    const whole = await collectVisitors(client, PROJECT_ID, period, options);
    expect(numbers).toEqual(whole);
    expect(numbers).toMatchObject({
      pathCount: 1_100,
      pagesRead: 5,
      complete: true,
      totals: { total: 9_500 },
    });
  });

  it('stops waiting when the bot shuts down', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(300));
    fake.injectFault('visitors', { status: 429, retryAfter: '600' }, 10);
    const shutdown = new AbortController();
    const waits: number[] = [];

    const error = await failureOf(
      collectVisitors(client, PROJECT_ID, period, {
        top: 3,
        maxPages: 100,
        giveUpMs: 3_600_000,
        signal: shutdown.signal,
        // The real wait (its ten minutes), stopped once it has begun: not before the first read.
        sleep: (ms, signal) => {
          waits.push(ms);
          const waiting = sleepFor(ms, undefined, { signal });
          shutdown.abort();
          return waiting;
        },
      }),
    );

    expect(waits).toEqual([600_000]);
    expect(fake.requestsFor('visitors')).toHaveLength(1);
    expect(error.name).toBe('AbortError');
  });

  it('a 400 fails at once, without retrying', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(600));
    fake.injectFault((request) => request.query.offset === '250', {
      status: 400,
      body: { error: 'Invalid query parameters', details: [{ message: 'dateFrom is out of range' }] },
    });

    const error = await failureOf(
      collectVisitors(client, PROJECT_ID, period, { top: 3, maxPages: 100, giveUpMs: 1_000 }),
    );

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(offsetsAsked(fake)).toEqual([0, 250]);
  });

  it('waits out Mintlify failing past the client’s retries a few times, at the same offset, then fails (a scheduled digest)', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(300));
    fake.injectFault((request) => request.query.offset === '250', { status: 503 }, 2);
    const time = virtualTime();
    const numbers = await collectVisitors(client, PROJECT_ID, period, anHour(time, { waitOutTrouble: true }));
    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250]);
    expect(time.waits).toEqual([60_000, 120_000]);
    expect(numbers).toMatchObject({ pathCount: 300, complete: true });

    // Failing on and on: three waits, then the failure.
    fake.requests.length = 0;
    fake.injectFault('visitors', { status: 503 }, 100);
    const error = await failureOf(
      collectVisitors(client, PROJECT_ID, period, anHour(virtualTime(), { waitOutTrouble: true })),
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(offsetsAsked(fake)).toEqual([0, 0, 0, 0]);
  });

  it('waits out Mintlify’s trouble a few times on each page, not a few times for the whole export', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.setVisitors(rows(900));
    fake.injectFault((request) => request.query.offset === '250', { status: 503 }, 2);
    fake.injectFault((request) => request.query.offset === '500', { status: 503 }, 2);
    const time = virtualTime();

    const numbers = await collectVisitors(client, PROJECT_ID, period, anHour(time, { waitOutTrouble: true }));

    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 250, 500, 500, 500, 750]);
    expect(time.waits).toEqual([60_000, 120_000, 60_000, 120_000]);
    expect(numbers).toMatchObject({ pathCount: 900, complete: true });
  });

  it('a passing 500 is retried by the client on the same offset; a lasting one fails', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(600));
    fake.injectFault((request) => request.query.offset === '250', { status: 500 }, 1);

    await collectVisitors(client, PROJECT_ID, period, { top: 3, maxPages: 100, giveUpMs: 1_000 });
    expect(offsetsAsked(fake)).toEqual([0, 250, 250, 500]);

    fake.requests.length = 0;
    fake.injectFault('visitors', { status: 500 }, 100);
    const error = await failureOf(
      collectVisitors(client, PROJECT_ID, period, { top: 3, maxPages: 100, giveUpMs: 1_000 }),
    );
    expect(error).toBeInstanceOf(ServiceError);
    // Two tries of an analytics read, no more: each is one of the organization's hourly 100.
    expect(offsetsAsked(fake)).toEqual([0, 0]);
  });
});

describe('reading last week’s totals for a comparison', () => {
  it('asks for one row of the previous period', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(600), { human: 10, ai: 2, total: 11 });

    expect(await readSiteTotals(client, PROJECT_ID, period)).toEqual({ human: 10, ai: 2, total: 11 });
    expect(fake.requestsFor('visitors').map((request) => request.query)).toEqual([
      { ...period, limit: '1', offset: '0' },
    ]);
  });

  it('shows no change rather than fail when that request fails', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 1 } });
    fake.injectFault('visitors', { status: 429, retryAfter: '3600' });

    expect(await readSiteTotals(client, PROJECT_ID, period)).toBeUndefined();
  });
});

describe('a visitors export that repeats a row on a later page', () => {
  // The docs promise no order, so paging by offset may meet a path twice (Mintlify's own rows moving
  // between two requests, or rows that tie): the digest ranks each page once.
  it('ranks each path once, however many pages it is met on', async () => {
    const { fake, client } = await fakeAndClient();
    const all = rows(300);
    fake.setVisitors(all, { human: 9_000, ai: 700, total: 9_500 });
    const peak = all.find((row) => row.path === '/page-7')!;
    // The second page holds the most visited path again, as the first page did.
    fake.injectFault((request) => request.operation === 'visitors' && request.query.offset === '250', {
      status: 200,
      body: {
        totals: { human: 9_000, ai: 700, total: 9_500 },
        visitors: [peak, ...all.slice(251)],
        hasMore: false,
      },
    });

    const numbers = await collectVisitors(client, PROJECT_ID, period, {
      top: 3,
      maxPages: 100,
      giveUpMs: 1_000,
    });

    expect(offsetsAsked(fake)).toEqual([0, 250]);
    const paths = numbers.top.map((page) => page.path);
    expect(paths[0]).toBe('/page-7');
    expect(new Set(paths).size).toBe(paths.length);
    // Counted once too: 299 paths (the second page's first row is the repeat).
    expect(numbers.pathCount).toBe(299);
  });
});
