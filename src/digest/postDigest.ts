import { findPostedMessage, type MessageMark } from '../slack/postedMessages.js';
import { classifySlackError, slackErrorCode } from '../slack/slackErrors.js';
import { readChannelMessage } from '../slack/threadMessages.js';
import { RENEWED_LEASE_MS, withRenewedLease } from '../store/lease.js';
import { collectVisitors, readSiteTotals, type SiteTotals, type VisitorNumbers } from './collectVisitors.js';
import { digestFailureText, STOPPED_TEXT } from './digestAnswers.js';
import type { DigestContext } from './digestContext.js';
import { type DigestMessage, digestMessage } from './digestMessage.js';
import type { PostedDigest } from './digestRecords.js';
import { type DigestPeriod, periodEndedInUtc, periodKey, periodOfRun, previousPeriod } from './period.js';
import { collectStruggles, type Struggles } from './struggles.js';

/**
 * Posting a digest: gather the period's numbers (from the store when this period was already
 * read, else from Mintlify), compare them with last week's, render, post.
 * The scheduled digest is posted once per (period, channel) across instances and restarts;
 * `/docs-agent digest` posts whenever it is asked.
 */

export type DigestOutcome =
  | { kind: 'posted'; period: DigestPeriod; channel: string; ts: string }
  | { kind: 'already_posted'; period: DigestPeriod; record: PostedDigest }
  /** Another instance (or an earlier request) holds the lease and is posting it. */
  | { kind: 'in_progress'; period: DigestPeriod }
  /** `text` is for the person who asked, in plain words. */
  | { kind: 'failed'; period: DigestPeriod; error: unknown; text: string };

/** `/docs-agent digest`'s, which may also find another channel's digest being prepared (one at a time). */
export type DigestRequestOutcome =
  | DigestOutcome
  | { kind: 'busy_elsewhere'; period: DigestPeriod }
  /** Asked for in the channel within the hour, and posted then: not posted twice. */
  | { kind: 'posted_recently'; period: DigestPeriod; record: PostedDigest };

// A response URL works for 30 minutes: a person's digest gives up in time to be told so.
const ON_REQUEST_GIVE_UP_MAX_MS = 25 * 60_000;

/** The scheduled digest (and `npm run digest`): once per period and channel. */
export async function postScheduledDigest(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
): Promise<DigestOutcome> {
  const { giveUpMs } = ctx.config.digest;
  // Renewed while the digest is gathered and posted: a worker that dies leaves it within seconds.
  const leased = await withRenewedLease(
    ctx.store.atomic,
    `digest:${channel}:${periodKey(period)}`,
    RENEWED_LEASE_MS,
    async (lost): Promise<DigestOutcome> => {
      // Read under the lease: an instance that got here after another finished sees its record.
      let record: PostedDigest | undefined;
      try {
        record = (await ctx.records.posted(period, channel)) ?? (await postedEarlier(ctx, period, channel));
      } catch (error) {
        if (!(error instanceof UnknownEarlierPostError)) throw error;
        // Posting now could post it twice: this try fails, and the digest is tried again later.
        ctx.logger.warn(
          `the digest for ${periodKey(period)} in ${channel} was not posted: could not check whether it was posted already (${slackProblem(error.cause)})`,
        );
        return {
          kind: 'failed',
          period,
          error: error.cause,
          text: digestFailureText(error.cause, ctx.now()),
        };
      }
      if (record) return { kind: 'already_posted', period, record };
      const outcome = await gatherAndPost(ctx, period, channel, {
        giveUpMs,
        // Nobody waits for it: Mintlify in trouble is waited out, rather than every page read again.
        waitOutTrouble: true,
        mark: digestMark(period, channel),
        lost,
      });
      if (outcome.kind === 'posted') {
        await ctx.records.markPosted({
          channel,
          dateFrom: period.dateFrom,
          dateTo: period.dateTo,
          ts: outcome.ts,
          postedAt: ctx.now().toISOString(),
        });
      }
      return outcome;
    },
    { logger: ctx.logger },
  );
  return leased.ran ? leased.value : { kind: 'in_progress', period };
}

export interface DigestRequest {
  channel: string;
  /** Told once, when the analytics limit first makes the digest wait a while, so the person knows why. */
  onLongWait?: (waitMs: number) => void;
}

// Shorter waits pass unnoticed; telling the person about them would only flicker.
const LONG_WAIT_MS = 10_000;

/** `/docs-agent digest`: the last 7 full days, posted now in the channel where it was asked. */
export async function postDigestNow(
  ctx: DigestContext,
  request: DigestRequest,
): Promise<DigestRequestOutcome> {
  const period = periodOfRun(ctx.now(), ctx.config.digest.timezone);
  const giveUpMs = Math.min(ctx.config.digest.giveUpMs, ON_REQUEST_GIVE_UP_MAX_MS);
  // One at a time per channel: a second request would spend the same shared analytics budget again.
  // And one at a time in the whole deployment: a digest may wait long for Mintlify's analytics limit,
  // holding one of the worker's request slots, and every channel's digest spends the same budget.
  const leased = await withRenewedLease(
    ctx.store.atomic,
    `digest-request:${request.channel}`,
    RENEWED_LEASE_MS,
    async (): Promise<DigestRequestOutcome> => {
      // The same digest twice in a channel within the hour is a duplicate: the person is shown the first.
      // Read under the channel's lease, so that a request in another process cannot be posting it now.
      const recent = await ctx.records.postedOnRequest(period, request.channel);
      if (recent && (await stillThere(ctx, recent)))
        return { kind: 'posted_recently', period, record: recent };
      const anywhere = await withRenewedLease(
        ctx.store.atomic,
        'digest-request',
        RENEWED_LEASE_MS,
        () =>
          gatherAndPost(ctx, period, request.channel, {
            giveUpMs,
            onRateLimited: onceLong(request.onLongWait),
          }),
        { logger: ctx.logger },
      );
      if (!anywhere.ran) return { kind: 'busy_elsewhere', period };
      const outcome = anywhere.value;
      if (outcome.kind === 'posted') {
        const posted = {
          channel: outcome.channel,
          dateFrom: period.dateFrom,
          dateTo: period.dateTo,
          ts: outcome.ts,
        };
        await ctx.records
          .markPostedOnRequest({ ...posted, postedAt: ctx.now().toISOString() })
          .catch((error: unknown) =>
            ctx.logger.warn(`could not note the digest posted in ${outcome.channel}: ${String(error)}`),
          );
      }
      return outcome;
    },
    { logger: ctx.logger },
  );
  return leased.ran ? leased.value : { kind: 'in_progress', period };
}

/** A digest posted on request is still in its channel (not deleted); when Slack cannot say, it is taken to be. */
async function stillThere(ctx: DigestContext, posted: PostedDigest): Promise<boolean> {
  try {
    return (await readChannelMessage(ctx.slack, posted.channel, posted.ts)) !== undefined;
  } catch {
    return true;
  }
}

function onceLong(notify: ((waitMs: number) => void) | undefined) {
  let told = false;
  return (waitMs: number) => {
    if (told || !notify || waitMs < LONG_WAIT_MS) return;
    told = true;
    notify(waitMs);
  };
}

/** How the visitors are read: how long to wait at most, and whom to tell of a long wait. */
interface ReadOptions {
  giveUpMs: number;
  onRateLimited?: ((waitMs: number) => void) | undefined;
  /** Wait out Mintlify failing (5xx, timeouts) a few times at the same page (the scheduled digest). */
  waitOutTrouble?: boolean;
  /** The scheduled digest's lease: read and posted only while it is ours (see `withRenewedLease`). */
  lost?: AbortSignal;
}
async function gatherAndPost(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
  options: ReadOptions & { mark?: MessageMark },
): Promise<DigestOutcome> {
  const what = `the digest for ${periodKey(period)} in ${channel}`;
  let message: DigestMessage;
  try {
    message = await buildMessage(ctx, period, options);
  } catch (error) {
    if (ctx.shutdown.aborted) {
      ctx.logger.warn(`${what} was not posted: the bot stopped while it was being prepared`);
      return { kind: 'failed', period, error, text: STOPPED_TEXT };
    }
    ctx.logger.error(`${what} was not posted: ${error instanceof Error ? error.message : String(error)}`);
    return { kind: 'failed', period, error, text: digestFailureText(error, ctx.now()) };
  }

  // Gathering can take long (the analytics rate limit): if the lease lapsed meanwhile, another worker
  // may be posting the scheduled digest now. A person's digest is posted anyway: its lease only kept
  // two requests from spending the analytics budget twice, and that is spent by now.
  options.lost?.throwIfAborted();
  try {
    const answer = await ctx.slack.chat.postMessage({
      channel,
      text: message.text,
      blocks: message.blocks,
      unfurl_links: false,
      unfurl_media: false,
      ...(options.mark ? { metadata: options.mark } : {}),
    });
    ctx.logger.info(`posted ${what}`);
    return { kind: 'posted', period, channel, ts: answer.ts ?? '' };
  } catch (error) {
    ctx.logger.error(`${what} was not posted: Slack refused it (${slackProblem(error)})`);
    return { kind: 'failed', period, error, text: digestFailureText(error, ctx.now()) };
  }
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

async function buildMessage(
  ctx: DigestContext,
  period: DigestPeriod,
  options: ReadOptions,
): Promise<DigestMessage> {
  const { config } = ctx;
  const numbers = await periodNumbers(ctx, period, options);
  const before = previousPeriod(period);
  const kept = await ctx.records.numbers(before);
  const previous = kept ? { totals: kept.totals, top: kept.top } : await previousTotals(ctx, before);
  const struggles = config.digest.struggles > 0 ? await periodStruggles(ctx, period) : undefined;
  return digestMessage({
    numbers,
    timeZone: period.timeZone,
    previous,
    siteUrl: config.digest.siteUrl,
    struggles,
  });
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
  if (kept?.complete && final && kept.top.length >= Math.min(top, kept.pathCount)) {
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
    // A scheduled digest whose lease was lost stops reading: another worker reads it now.
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

function slackProblem(error: unknown): string {
  const code = slackErrorCode(error) ?? String(error);
  switch (classifySlackError(error)) {
    case 'not_in_channel':
      return `${code}: invite the bot to the channel`;
    case 'channel_gone':
      return `${code}: check DIGEST_CHANNEL, or the channel where the digest was asked for`;
    case 'missing_scope':
      return `${code}: the app needs the chat:write scope`;
    default:
      return code;
  }
}

/** The scheduled digest carries this mark, so a post whose record was lost can be found again. */
function digestMark(period: DigestPeriod, channel: string): MessageMark {
  return { event_type: 'docs_agent_digest', event_payload: { period: periodKey(period), channel } };
}

/** Slack would not let the bot look for an earlier post of the digest. */
class UnknownEarlierPostError extends Error {
  constructor(override readonly cause: unknown) {
    super(`could not look for an earlier post of the digest: ${String(cause)}`);
    this.name = 'UnknownEarlierPostError';
  }
}

/**
 * The digest posted by a run whose record never got written (it crashed, or Redis was away right
 * after the post): found in the channel by its mark, recorded now, and not posted twice.
 */
async function postedEarlier(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
): Promise<PostedDigest | undefined> {
  // A digest is posted on or after its period's last day; a day earlier covers every time zone.
  const since = new Date(Date.parse(`${period.dateTo}T00:00:00Z`) - 24 * 3_600_000);
  const found = await findPostedMessage(
    ctx.slack,
    { channel, threadTs: null, since },
    digestMark(period, channel),
    ctx.botId,
  ).catch((error: unknown) => {
    throw new UnknownEarlierPostError(error);
  });
  if (!found) return undefined;
  const record = {
    channel,
    dateFrom: period.dateFrom,
    dateTo: period.dateTo,
    ts: found.ts,
    postedAt: ctx.now().toISOString(),
  };
  await ctx.records.markPosted(record);
  return record;
}
