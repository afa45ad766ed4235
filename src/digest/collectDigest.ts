/**
 * Gathering a digest: the period's visitors, last week's for comparison and where readers
 * struggled, each read from Mintlify once and kept in the store, so a second digest of the period
 * spends none of the organization's hourly analytics budget.
 */
import { collectVisitors, readSiteTotals, type SiteTotals, type VisitorNumbers } from './collectVisitors.js';
import type { DigestContext } from './digestContext.js';
import type { DigestView } from './digestMessage.js';
import { type DigestPeriod, periodEndedInUtc, periodKey, previousPeriod } from './period.js';
import { collectStruggles, type Struggles } from './struggles.js';

/** How the visitors are read: how long to wait at most, and whom to tell of a long wait. */
export interface ReadOptions {
  giveUpMs: number;
  onRateLimited?: ((waitMs: number) => void) | undefined;
  /** Wait out Mintlify failing (5xx, timeouts) a few times at the same page (the scheduled digest). */
  waitOutTrouble?: boolean;
  /** The digest's lease: read and posted only while it is ours (see `withRenewedLease`). */
  lost?: AbortSignal;
}

/** The week before's totals alone (one analytics request), kept once read: a second digest of the week spends none. */
async function previousTotals(
  ctx: DigestContext,
  before: DigestPeriod,
): Promise<{ totals: SiteTotals } | undefined> {
  const stored = await ctx.records.totals(before);
  if (stored) return { totals: stored };
  const totals = await readSiteTotals(ctx.mintlify, ctx.config.mintlify.projectId, before);
  if (!totals) return undefined;
  await ctx.records.saveTotals(before, totals).catch(() => undefined);
  return { totals };
}

/** The period's numbers beside last week's, and where readers struggled: what the digest shows. */
export async function collectDigest(
  ctx: DigestContext,
  period: DigestPeriod,
  options: ReadOptions,
): Promise<DigestView> {
  const { config } = ctx;
  const numbers = await periodNumbers(ctx, period, options);
  const before = previousPeriod(period);
  const kept = await ctx.records.numbers(before);
  const previous = kept
    ? {
        totals: kept.totals,
        top: kept.top,
        topHoldsAll: kept.complete && kept.top.length >= kept.pathCount,
      }
    : await previousTotals(ctx, before);
  const struggles = config.digest.struggles > 0 ? await periodStruggles(ctx, period) : undefined;
  return { numbers, timeZone: period.timeZone, previous, siteUrl: config.digest.siteUrl, struggles };
}

/**
 * What readers struggled with: read once per period (at most 10 analytics reads), kept when
 * read in full, so a second digest of the period spends none. A kind Mintlify refused is read
 * again next time.
 */
async function periodStruggles(ctx: DigestContext, period: DigestPeriod): Promise<Struggles> {
  const top = ctx.config.digest.struggles;
  const kept = await ctx.records.struggles(period);
  // Kept for the same DIGEST_STRUGGLES only: another count would list more, or fewer.
  if (kept?.top === top) return { ...kept, requests: 0 };
  const startedAt = ctx.now();
  const read = await collectStruggles(ctx.mintlify, ctx.config.mintlify.projectId, period, { top });
  if (read.unread.length > 0) {
    ctx.logger.warn(
      `the digest for ${periodKey(period)}: Mintlify did not give ${read.unread.join(', ')} (left out of "Where readers struggled")`,
    );
  } else if (periodEndedInUtc(period, startedAt)) {
    // Read before the period ended in Mintlify's time: a second digest of it reads them again.
    await ctx.records.saveStruggles(period, read);
  }
  return read;
}

/**
 * A finished period's numbers do not change, so a second digest of the same period (a person's
 * `/docs-agent digest` on the scheduled day, another channel) reads them from the store instead
 * of spending the organization's hourly analytics budget again.
 */
async function periodNumbers(
  ctx: DigestContext,
  period: DigestPeriod,
  options: ReadOptions,
): Promise<VisitorNumbers> {
  const { top, maxPages } = ctx.config.digest;
  const kept = await ctx.records.numbers(period);
  // Numbers read before the period ended in Mintlify's time (a digest early in a time zone east of
  // UTC) stand for last week in the next digest, but a second digest of this one reads them again.
  const final = kept !== undefined && periodEndedInUtc(period, new Date(kept.collectedAt));
  // Read in full, or as far as DIGEST_MAX_PAGES lets it (a site past it is read to the same cap again).
  const readAsFar = kept !== undefined && (kept.complete || kept.pagesRead >= maxPages);
  if (readAsFar && final && kept.top.length >= Math.min(top, kept.pathCount)) {
    return { ...kept, top: kept.top.slice(0, top) };
  }
  const startedAt = ctx.now();
  // A read that stopped part-way (the analytics limit outlasted it, its worker crashed) is gone on
  // with: on a big site each try would otherwise spend the hour's requests on the same first pages.
  // Only a read begun once the period ended in UTC: before, Mintlify's numbers (and the order of its
  // export) still change, and pages read at two moments would not add up. Not across DIGEST_TOP either.
  const earlier = await ctx.records.progress(period);
  const goOn =
    earlier !== undefined && earlier.size === top && periodEndedInUtc(period, new Date(earlier.collectedAt));
  const collectedAt = goOn ? earlier.collectedAt : startedAt.toISOString();
  if (goOn) {
    ctx.logger.info(
      `the digest for ${periodKey(period)}: reading the visitors from offset ${earlier.offset}, where an earlier read stopped`,
    );
  }
  const numbers = await collectVisitors(ctx.mintlify, ctx.config.mintlify.projectId, period, {
    top,
    ...(goOn ? { from: earlier } : {}),
    // Best effort: without it, a later read starts from the first page.
    onPage: (progress) =>
      ctx.records.saveProgress(period, { ...progress, size: top, collectedAt }).catch(() => {}),
    maxPages,
    giveUpMs: options.giveUpMs,
    ...(options.waitOutTrouble ? { waitOutTrouble: true } : {}),
    // A digest whose lease was lost stops reading: another worker (or run) reads it now.
    signal: options.lost ? AbortSignal.any([ctx.shutdown, options.lost]) : ctx.shutdown,
    onTrouble: (waitMs, error) =>
      ctx.logger.warn(
        `the digest for ${periodKey(period)}: Mintlify failed (${String(error)}); asking again in ${Math.round(waitMs / 1000)} s`,
      ),
    ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
    ...ctx.collect,
  });
  if (!numbers.complete) {
    ctx.logger.warn(
      `the visitors export for ${periodKey(period)} has more than ${maxPages} pages (DIGEST_MAX_PAGES): the digest ranks the paths of those pages only`,
    );
  }
  if (!periodEndedInUtc(period, startedAt)) {
    ctx.logger.info(
      `the digest for ${periodKey(period)} was read before its last day ended in UTC: a second digest of it reads it again`,
    );
  }
  await ctx.records.saveNumbers(numbers, new Date(collectedAt));
  await ctx.records.dropProgress(period).catch(() => {}); // it would lapse within the day
  return numbers;
}
