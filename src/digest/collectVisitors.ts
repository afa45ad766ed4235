import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  isPassingFailure,
  type MintlifyClient,
  RateLimitedError,
  type VisitorsPage,
} from '../mintlify/index.js';
import { periodKey } from './period.js';
import { type PageVisitors, TopPages } from './topPages.js';

/**
 * Reads a period's visitors export, page after page, into the site totals and the top N pages.
 * Rows are ranked as they arrive and then dropped, so memory does not grow with the site.
 *
 * The client already retries a failed page a few times within a minute or so. The analytics
 * limit (100 requests per organization per hour, shared with every other analytics caller) can
 * need a much longer wait than that, so on a 429 that outlasts the client's retries this waits
 * as asked (`Retry-After`, else a growing backoff) and asks for the same offset again: pages
 * already read are never read twice. It gives up once the next wait would end past `giveUpMs`.
 */

export type SiteTotals = VisitorsPage['totals'];

export interface PeriodDates {
  dateFrom: string;
  dateTo: string;
}

export interface VisitorNumbers {
  period: PeriodDates;
  totals: SiteTotals;
  /** Best first; at most `top` entries. */
  top: PageVisitors[];
  /** Paths with visits among the pages read. */
  pathCount: number;
  pagesRead: number;
  /** False when the page cap stopped the walk while the service still had more. */
  complete: boolean;
}

/** How far a read of a period's export got: a later read of the period goes on from there. */
export interface ReadProgress {
  /** The next offset to read. */
  offset: number;
  pagesRead: number;
  totals: SiteTotals;
  /** The ranking of the rows read so far, best first. */
  top: PageVisitors[];
  /** How many rows were read. */
  seen: number;
}

export interface CollectOptions {
  top: number;
  /** Where an earlier read of the same period stopped: the pages it read are not read again. */
  from?: ReadProgress;
  /** Told after each page read, e.g. to keep the progress for a read that comes after a failure. */
  onPage?: (progress: ReadProgress) => Promise<void>;
  /** Safety cap against a `hasMore` that never ends. */
  maxPages: number;
  /** No wait for the rate limit may end later than this after the start. */
  giveUpMs: number;
  signal?: AbortSignal;
  /** Told before each long wait for the rate limit, e.g. to let a person know. */
  onRateLimited?: (waitMs: number) => void;
  /**
   * Wait out Mintlify failing past the client's retries (5xx, timeout, cut connection) a few times at
   * the same offset, rather than fail: for a digest nobody is waiting for.
   */
  waitOutTrouble?: boolean;
  /** Told before each such wait, e.g. to log it. */
  onTrouble?: (waitMs: number, error: unknown) => void;
  /** Waits when a 429 says nothing of when to come back, or Mintlify failed; `retryNumber` starts at 1. */
  backoffMs?: (retryNumber: number) => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

/** The most rows a visitors page may hold, so the fewest requests spend the hourly budget. */
export const PAGE_SIZE = 250;

/** How many times a page Mintlify failed (5xx, timeout, cut connection) is waited for before the digest fails. */
const TROUBLE_WAITS = 3;

/** Without Retry-After: 1, 2, 4, 8 minutes, then every 15; the hourly window frees requests slowly. */
function defaultRateLimitBackoffMs(retryNumber: number): number {
  return Math.min(15 * 60_000, 60_000 * 2 ** (retryNumber - 1));
}

export class DigestGaveUpError extends Error {
  constructor(
    readonly period: PeriodDates,
    /** The offset that could not be read. */
    readonly offset: number,
    readonly elapsedMs: number,
    /** What the service last asked us to wait, when it said. */
    readonly retryAfterMs: number | undefined,
    readonly lastError: RateLimitedError,
  ) {
    super(
      `gave up reading the visitors for ${periodKey(period)} at offset ${offset} after ${Math.round(elapsedMs / 1000)} s: Mintlify's analytics rate limit (100 requests per organization per hour) is still reached${retryAfterMs === undefined ? '' : ` and asks to wait ${Math.ceil(retryAfterMs / 1000)} s more`}`,
      { cause: lastError },
    );
    this.name = 'DigestGaveUpError';
  }
}

type VisitorsSource = Pick<MintlifyClient, 'visitorsPage'>;

export async function collectVisitors(
  client: VisitorsSource,
  projectId: string,
  period: PeriodDates,
  options: CollectOptions,
): Promise<VisitorNumbers> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
  const backoffMs = options.backoffMs ?? defaultRateLimitBackoffMs;
  const startedAt = now();
  const { from } = options;
  const top = new TopPages(options.top, from ? { ranked: from.top, seen: from.seen } : undefined);
  const { dateFrom, dateTo } = period;

  let totals: SiteTotals | undefined = from?.totals;
  let offset = from?.offset ?? 0;
  let pagesRead = from?.pagesRead ?? 0;
  let rateLimitedTimes = 0;
  let troubledTimes = 0;
  let hasMore = true;
  while (hasMore && pagesRead < options.maxPages) {
    options.signal?.throwIfAborted();
    let page: VisitorsPage;
    try {
      page = await client.visitorsPage(projectId, { dateFrom, dateTo, limit: PAGE_SIZE, offset });
    } catch (error) {
      // Mintlify in trouble past the client's quick retries: waited out a few times at the same
      // offset, within the bound, rather than failing the digest and reading every page again.
      if (isPassingFailure(error) && options.waitOutTrouble && troubledTimes < TROUBLE_WAITS) {
        troubledTimes += 1;
        const waitMs = backoffMs(troubledTimes);
        if (now() - startedAt + waitMs > options.giveUpMs) throw error;
        options.onTrouble?.(waitMs, error);
        await sleep(waitMs, options.signal);
        continue; // the same offset again
      }
      if (!(error instanceof RateLimitedError)) throw error;
      rateLimitedTimes += 1;
      const waitMs = error.retryAfterMs ?? backoffMs(rateLimitedTimes);
      const elapsedMs = now() - startedAt;
      if (elapsedMs + waitMs > options.giveUpMs) {
        throw new DigestGaveUpError(period, offset, elapsedMs, error.retryAfterMs, error);
      }
      options.onRateLimited?.(waitMs);
      await sleep(waitMs, options.signal);
      continue; // the same offset again
    }
    totals ??= { human: page.totals.human, ai: page.totals.ai, total: page.totals.total };
    for (const row of page.visitors) top.offer(row);
    pagesRead += 1;
    rateLimitedTimes = 0;
    troubledTimes = 0;
    // A page of nothing is the end, whatever hasMore says: reading on would spend the organization's
    // hourly analytics budget on empty pages.
    hasMore = page.hasMore && page.visitors.length > 0;
    offset += PAGE_SIZE;
    if (hasMore) await options.onPage?.({ offset, pagesRead, totals, top: top.ranked(), seen: top.seen });
  }

  return {
    period: { dateFrom, dateTo },
    totals: totals ?? { human: 0, ai: 0, total: 0 },
    top: top.ranked(),
    pathCount: top.seen,
    pagesRead,
    complete: !hasMore,
  };
}

/**
 * A period's site totals from one request (limit=1), for a week-over-week change when no digest
 * of that period was kept. Best effort: any failure means "no change shown", never a long wait for the rate limit.
 */
export async function readSiteTotals(
  client: VisitorsSource,
  projectId: string,
  period: PeriodDates,
): Promise<SiteTotals | undefined> {
  try {
    const page = await client.visitorsPage(projectId, { ...period, limit: 1, offset: 0 });
    return { human: page.totals.human, ai: page.totals.ai, total: page.totals.total };
  } catch {
    return undefined;
  }
}
