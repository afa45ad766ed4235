import { setTimeout as sleepFor } from 'node:timers/promises';
import { operatorHint } from '../jobs/jobAnswers.js';
import { findPostedMessage, type MessageMark, postMarked } from '../slack/postedMessages.js';
import {
  classifySlackError,
  isPassingSlackFailure,
  slackErrorCode,
  surelyNotDone,
} from '../slack/slackErrors.js';
import { readChannelMessage } from '../slack/threadMessages.js';
import { type HeldLease, leaseHolderIs, RENEWED_LEASE_MS, withRenewedLease } from '../store/lease.js';
import { isStoreUnavailable } from '../store/storeErrors.js';
import { collectDigest, type ReadOptions } from './collectDigest.js';
import { digestMark } from './digestMark.js';
import {
  type DigestFailure,
  digestFailure,
  MaybePostedError,
  promisedDigestAnswer,
  STOPPED,
} from './digestAnswers.js';
import type { DigestContext } from './digestContext.js';
import { type DigestMessage, digestMessage } from './digestMessage.js';
import { answerWaiting, type DigestWaiter, waitForDigest } from './digestWaiters.js';
import { ASKED_KEEP_MS, type PostedDigest } from './digestRecords.js';
import { type DigestPeriod, periodKey, periodOfRun } from './period.js';

/**
 * Posting a digest: gather it (`collectDigest`), render, post.
 * The scheduled digest is posted once per (period, channel) across instances and restarts;
 * `/docs-agent digest` posts whenever it is asked.
 */

export type DigestOutcome =
  | { kind: 'posted'; period: DigestPeriod; channel: string; ts: string }
  | { kind: 'already_posted'; period: DigestPeriod; record: PostedDigest }
  /** Another instance (or an earlier request) holds the lease and is posting it. */
  | { kind: 'in_progress'; period: DigestPeriod }
  /** `text` is for the person who asked, in plain words; `next`, what they should do then. */
  | ({ kind: 'failed'; period: DigestPeriod; error: unknown } & DigestFailure);

/** The scheduled digest's, which may find a digest asked for being prepared: it waits its turn. */
export type ScheduledDigestOutcome = DigestOutcome | { kind: 'waiting_turn'; period: DigestPeriod };

/** `/docs-agent digest`'s, which may also find another digest being prepared (one at a time). */
export type DigestRequestOutcome =
  | DigestOutcome
  /** Another digest is being prepared: another channel's, or the scheduled one. */
  | { kind: 'busy_elsewhere'; period: DigestPeriod }
  /** Posted in the channel within the hour (asked for, or the scheduled one): not posted twice. */
  | { kind: 'posted_recently'; period: DigestPeriod; record: PostedDigest }
  /**
   * Another request of the channel's is preparing it: the person was told so (`waiter.promise`), and
   * the other request tells them if it ends without a digest in the channel.
   */
  | { kind: 'waiting'; period: DigestPeriod }
  /**
   * Another run of this same request holds the channel's digest: its lease lapsed while it was
   * prepared (a stall, or Redis away) and the queue ran the request again, or the other way round.
   * Not posted, and nothing said: that run answers.
   */
  | { kind: 'own_run_elsewhere'; period: DigestPeriod };

// A response URL works for 30 minutes: a person's digest gives up in time to be told so.
const ON_REQUEST_GIVE_UP_MAX_MS = 25 * 60_000;

/**
 * Held while a digest is gathered and posted, the scheduled one or one asked for: one at a time in
 * the whole deployment. Every digest spends the organization's 100 analytics requests an hour, and
 * two of the same week at once would both read it (the second reads nothing once the first saved
 * the week's numbers). Named when only `/docs-agent digest` took it; kept, so that processes of the
 * version before still take turns with these.
 */
const GATHERING_LEASE = 'digest-request';

/** The lease under which the digest of `period` is posted to `channel` on the schedule. */
export const scheduledDigestLease = (period: DigestPeriod, channel: string) =>
  `digest:${channel}:${periodKey(period)}`;

/** The scheduled digest (and `npm run digest`): once per period and channel. */
export async function postScheduledDigest(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
): Promise<ScheduledDigestOutcome> {
  const { giveUpMs } = ctx.config.digest;
  // Renewed while the digest is gathered and posted: a worker that dies leaves it within seconds.
  const leased = await withRenewedLease(
    ctx.store.atomic,
    scheduledDigestLease(period, channel),
    RENEWED_LEASE_MS,
    async (lost): Promise<ScheduledDigestOutcome> => {
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
          ...digestFailure(error.cause, ctx.now()),
        };
      }
      if (record) return { kind: 'already_posted', period, record };
      // A digest asked for is being prepared: this one is looked at again shortly, rather than read
      // alongside it. Its own lease's loss still stops it before the post (`lost`).
      const gathered = await withRenewedLease(
        ctx.store.atomic,
        GATHERING_LEASE,
        RENEWED_LEASE_MS,
        async (): Promise<DigestOutcome | { kind: 'asked_for'; record: PostedDigest }> => {
          // Someone asked for the same week in this channel within the hour (just before the schedule,
          // or while this one waited its turn): that one is the week's, rather than the same twice.
          // Read under the lease the one asked for is posted and noted under.
          const asked = await askedRecently(ctx, period, channel);
          if (asked && (await stillThere(ctx, asked))) return { kind: 'asked_for', record: asked };
          return gatherAndPost(ctx, period, channel, {
            giveUpMs,
            // Nobody waits for it: Mintlify in trouble is waited out, rather than every page read again.
            waitOutTrouble: true,
            mark: digestMark(period, channel),
            // Not posted again at once: the next try looks for it by its mark first (postedEarlier).
            triedAgainLater: true,
            lost,
          });
        },
        { logger: ctx.logger },
      );
      if (!gathered.ran) return { kind: 'waiting_turn', period };
      const outcome = gathered.value;
      if (outcome.kind === 'asked_for') {
        await ctx.records.markPosted(outcome.record);
        return { kind: 'already_posted', period, record: outcome.record };
      }
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
  /**
   * When it was asked for (its queue job's add): a run of it that died (or stopped) after Slack took
   * its digest, before the digest was noted, left it in the channel since, where its run again finds it.
   */
  askedAt?: Date;
  /** Told once, when the analytics limit first makes the digest wait a while, so the person knows why. */
  onLongWait?: (waitMs: number) => void;
  /**
   * Who asked, when they can be answered later: finding the channel's digest under way, they are
   * told so (`promise`), and told by the request preparing it if it ends without one.
   */
  waiter?: DigestWaiter & { promise: () => Promise<void> };
}

// Shorter waits pass unnoticed; telling the person about them would only flicker.
const LONG_WAIT_MS = 10_000;

/** `/docs-agent digest`: the last 7 full days, posted now in the channel where it was asked. */
export async function postDigestNow(
  ctx: DigestContext,
  request: DigestRequest,
): Promise<DigestRequestOutcome> {
  const period = periodOfRun(ctx.now(), ctx.config.digest.timezone);
  // Where the bot is not a member (a channel it was not invited to, a DM between people), the digest
  // could not be posted: found out before the numbers are read, which asking again would spend again.
  const closed = await closedToBot(ctx, request.channel);
  if (closed) return { kind: 'failed', period, error: closed, ...digestFailure(closed, ctx.now()) };
  const { waiter } = request;
  const promise = waiter && once(waiter.promise);
  const channelLease = `digest-request:${request.channel}`;
  let waitMs = 0;
  for (let turn = 1; ; turn += 1) {
    const outcome = await prepareInChannel(ctx, request, period, channelLease, waitMs);
    if (typeof outcome === 'object') return outcome;
    const waited = waitMs > 0;
    waitMs = 0;
    const holder = await ctx.store.atomic.holder(`lease:${channelLease}`);
    const ownRun = waiter !== undefined && leaseHolderIs(holder, waiter.id);
    if (outcome === 'lost') {
      // This request run again by the queue (this run outlasted its lock) has it now: that run answers.
      // Else another request's, or nobody's: this one takes its turn again, as if it had just come.
      if (ownRun) return { kind: 'own_run_elsewhere', period };
      if (turn < WAITING_TURNS) continue;
      return { kind: 'in_progress', period };
    }
    if (ownRun) {
      // A run of this same request holds it: one that died (this is its run again), whose lease
      // lapses within seconds, rather than one to wait on (it would never answer). This run waits for
      // it, then prepares the digest itself; still held by then, that run is alive, and answers.
      if (waited) return { kind: 'own_run_elsewhere', period };
      waitMs = OWN_RUN_LAPSES_MS;
      continue;
    }
    // Another request for this channel's digest is under way: the person is told it is, and hears
    // from that one if it ends without a digest here. One that ended just now leaves the turn to this one.
    if (!waiter || !promise || turn === WAITING_TURNS) return { kind: 'in_progress', period };
    const waiting = await waitForDigest(
      ctx.store.atomic,
      `lease:${channelLease}`,
      request.channel,
      waiter,
      promise,
    );
    if (waiting) return { kind: 'waiting', period };
  }
}

// A request that finds the channel's digest under way, then ended, this many times in a row stops there.
const WAITING_TURNS = 5;
/** How long a run waits for the channel's lease held by a dead run of its own request: it lapses by then. */
const OWN_RUN_LAPSES_MS = RENEWED_LEASE_MS + 1_000;

/**
 * The channel's digest, prepared under its lease (waited for up to `waitMs`): `held` when another
 * run holds it, `lost` when it lapsed while the digest was prepared (not posted then). Those told
 * meanwhile that it was on its way are answered once the lease is let go (`answerWaiting`).
 */
async function prepareInChannel(
  ctx: DigestContext,
  request: DigestRequest,
  period: DigestPeriod,
  channelLease: string,
  waitMs: number,
): Promise<DigestRequestOutcome | 'held' | 'lost'> {
  const giveUpMs = Math.min(ctx.config.digest.giveUpMs, ON_REQUEST_GIVE_UP_MAX_MS);
  const answerThem = (outcome: DigestRequestOutcome) =>
    answerWaiting(
      ctx.store.atomic,
      `lease:${channelLease}`,
      request.channel,
      promisedDigestAnswer(outcome),
      ctx.logger,
    );
  // One at a time per channel: a second request would spend the same shared analytics budget again.
  // And one at a time in the whole deployment, the scheduled digest's included (GATHERING_LEASE): a
  // digest may wait long for Mintlify's analytics limit, holding one of the worker's request slots.
  // Its request named in its leases: a run of it again can tell its own from another request's.
  const owner = request.waiter ? { holder: request.waiter.id } : {};
  let channelLost: AbortSignal | undefined;
  const leased = await withRenewedLease(
    ctx.store.atomic,
    channelLease,
    RENEWED_LEASE_MS,
    async (lost, held): Promise<DigestRequestOutcome> => {
      channelLost = lost;
      // The same digest twice in a channel within the hour is a duplicate: the person is shown the first.
      // Read under the channel's lease, so that a request in another process cannot be posting it now.
      const recent = await postedRecently(ctx, period, request.channel);
      if (recent && (await stillThere(ctx, recent))) {
        // Posted since this request was asked (by a run of it whose lease lapsed, or another's): the
        // digest it asked for, in the channel, and nothing more to say.
        const since = request.askedAt && Date.parse(recent.postedAt) >= request.askedAt.getTime();
        if (since) return { kind: 'posted', period, channel: request.channel, ts: recent.ts };
        return { kind: 'posted_recently', period, record: recent };
      }
      const posted =
        request.askedAt && (await postedSinceAsked(ctx, period, request.channel, request.askedAt));
      if (posted) return { kind: 'posted', period, channel: request.channel, ts: posted.ts };
      const gatherUnder = (gatheringWaitMs: number) =>
        withRenewedLease(
          ctx.store.atomic,
          GATHERING_LEASE,
          RENEWED_LEASE_MS,
          async () => {
            const outcome = await gatherAndPost(ctx, period, request.channel, {
              giveUpMs,
              onRateLimited: onceLong(request.onLongWait),
              mark: digestMark(period, request.channel, true),
              // The channel's lease lapsed meanwhile: another run of the channel's digest (this
              // request's own, run again by the queue) may be posting it now.
              lost,
              held,
            });
            // Noted under the lease: a scheduled digest of the week that waited its turn finds it.
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
          { logger: ctx.logger, waitMs: gatheringWaitMs, ...owner },
        );
      let anywhere = await gatherUnder(0);
      // Held by a run of this same request that died (this is its run again): it lapses within seconds.
      const ownRun = async (waiter: DigestWaiter) =>
        leaseHolderIs(await ctx.store.atomic.holder(`lease:${GATHERING_LEASE}`), waiter.id);
      if (!anywhere.ran && request.waiter && (await ownRun(request.waiter)))
        anywhere = await gatherUnder(OWN_RUN_LAPSES_MS);
      if (!anywhere.ran) return { kind: 'busy_elsewhere', period };
      return anywhere.value;
    },
    { logger: ctx.logger, waitMs, ...owner },
  ).catch(async (error: unknown) => {
    // Redis away: the request runs again once it is back, and answers them then.
    if (!isStoreUnavailable(error)) {
      await answerThem({ kind: 'failed', period, error, ...digestFailure(error, ctx.now()) }).catch(() => {});
    }
    throw error;
  });
  // Those waiting on this run are answered by the run that has the lease now, at its end.
  if (!leased.ran) return channelLost?.aborted ? 'lost' : 'held';
  await answerThem(leased.value).catch((error: unknown) =>
    ctx.logger.warn(
      `could not answer the people waiting for the digest in ${request.channel}: ${String(error)}`,
    ),
  );
  return leased.value;
}

/**
 * This period's digest asked for in the channel since `askedAt`, found by its mark: posted by a run
 * of this request that stopped before noting it (a worker stopped or died as Slack answered). Noted
 * now, so that the channel is not given the same digest twice. Slack not answering: not found.
 */
async function postedSinceAsked(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
  askedAt: Date,
): Promise<{ ts: string } | undefined> {
  const mark = digestMark(period, channel, true);
  const found = await findPostedMessage(
    ctx.slack,
    { channel, threadTs: null, since: askedAt },
    mark,
    ctx.botId,
  ).catch(() => undefined);
  if (!found) return undefined;
  ctx.logger.info(
    `the digest for ${periodKey(period)} in ${channel} was posted before a restart; not posting it again`,
  );
  const posted = { channel, dateFrom: period.dateFrom, dateTo: period.dateTo, ts: found.ts };
  await ctx.records
    .markPostedOnRequest({ ...posted, postedAt: ctx.now().toISOString() })
    .catch((error: unknown) =>
      ctx.logger.warn(`could not note the digest posted in ${channel}: ${String(error)}`),
    );
  return found;
}

/** Slack's refusal to let the bot read the channel, when it says the bot is not in it (else undefined: go on). */
async function closedToBot(ctx: DigestContext, channel: string): Promise<unknown> {
  try {
    await ctx.slack.conversations.history({ channel, limit: 1 });
    return undefined;
  } catch (error) {
    const kind = classifySlackError(error);
    return kind === 'not_in_channel' || kind === 'channel_gone' ? error : undefined;
  }
}

/**
 * The period's digest posted in the channel within the hour: one asked for, or the scheduled one
 * (asked for just after the schedule posted it, the same week would be in the channel twice).
 */
async function postedRecently(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
): Promise<PostedDigest | undefined> {
  const asked = await askedRecently(ctx, period, channel);
  if (asked) return asked;
  const scheduled = await ctx.records.posted(period, channel);
  return scheduled && withinTheHour(ctx, scheduled) ? scheduled : undefined;
}

/** The period's digest asked for in the channel within the hour. */
async function askedRecently(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
): Promise<PostedDigest | undefined> {
  const asked = await ctx.records.postedOnRequest(period, channel);
  return asked && withinTheHour(ctx, asked) ? asked : undefined;
}

const withinTheHour = (ctx: DigestContext, posted: PostedDigest) =>
  ctx.now().getTime() - Date.parse(posted.postedAt) < ASKED_KEEP_MS;

/** A digest posted is still in its channel (not deleted); when Slack cannot say, it is taken to be. */
async function stillThere(ctx: DigestContext, posted: PostedDigest): Promise<boolean> {
  try {
    const message = await readChannelMessage(ctx.slack, posted.channel, posted.ts);
    // Deleted with replies under it, Slack keeps a tombstone in its place ("This message was deleted.").
    return message !== undefined && message.subtype !== 'tombstone';
  } catch {
    return true;
  }
}

/** `tell`, run on its first call only: later calls wait for that one. */
function once(tell: () => Promise<void>): () => Promise<void> {
  let told: Promise<void> | undefined;
  return () => (told ??= tell());
}

function onceLong(notify: ((waitMs: number) => void) | undefined) {
  let told = false;
  return (waitMs: number) => {
    if (told || !notify || waitMs < LONG_WAIT_MS) return;
    told = true;
    notify(waitMs);
  };
}

async function gatherAndPost(
  ctx: DigestContext,
  period: DigestPeriod,
  channel: string,
  options: ReadOptions & { mark: MessageMark; triedAgainLater?: boolean; held?: HeldLease },
): Promise<DigestOutcome> {
  const what = `the digest for ${periodKey(period)} in ${channel}`;
  let message: DigestMessage;
  try {
    message = digestMessage(await collectDigest(ctx, period, options));
  } catch (error) {
    // Its lease lapsed while reading: another run reads it now, and answers.
    if (options.lost?.aborted) throw options.lost.reason;
    if (ctx.shutdown.aborted) {
      ctx.logger.warn(`${what} was not posted: the bot stopped while it was being prepared`);
      return { kind: 'failed', period, error, ...STOPPED };
    }
    ctx.logger.error(
      `${what} was not posted: ${error instanceof Error ? error.message : String(error)}${operatorHint(error)}`,
    );
    return { kind: 'failed', period, error, ...digestFailure(error, ctx.now()) };
  }

  // Gathering can take long (the analytics rate limit): if the lease lapsed meanwhile, another worker
  // may be posting the same digest now (the scheduled one, or a person's whose request the queue ran
  // again): this one is not posted. Checked with Redis now, `lost` being only as fresh as its last renewal.
  options.lost?.throwIfAborted();
  await options.held?.confirm();
  // Sent once (`SENT_ONCE`): Slack may store a post whose answer is lost (a 5xx, a cut connection),
  // and the client's retries would post it again. The scheduled digest's next try looks for it by
  // its mark (postedEarlier); a person's digest is looked for at once (postLookingFirst).
  const post = (content: { text: string; blocks?: DigestMessage['blocks'] }) =>
    postMarked(ctx.slackOnce, {
      channel,
      ...content,
      unfurl_links: false,
      unfurl_media: false,
      metadata: options.mark,
    });
  const postBlocksOrText = async (): Promise<{ ts?: string | undefined }> => {
    try {
      return await post({ text: message.text, blocks: message.blocks });
    } catch (error) {
      const code = slackErrorCode(error);
      if (code !== 'invalid_blocks' && code !== 'msg_blocks_too_long') throw error;
      // Our bug, or a limit Slack does not publish: the week's digest still goes out, as text.
      ctx.logger.error(`Slack refused the blocks of ${what} (${code}); posting it as text instead`);
      return post({ text: message.plain });
    }
  };
  try {
    const answer = options.triedAgainLater
      ? await postBlocksOrText()
      : await postLookingFirst(ctx, channel, options.mark, what, postBlocksOrText);
    ctx.logger.info(`posted ${what}`);
    return { kind: 'posted', period, channel, ts: answer.ts ?? '' };
  } catch (error) {
    if (error instanceof MaybePostedError) {
      ctx.logger.error(
        `${what} may have been posted: Slack failed (${slackProblem(error.cause)}), and the channel could not be read to look for it (${slackProblem(error.lookError)}); not posted again`,
      );
      return { kind: 'failed', period, error, ...digestFailure(error, ctx.now()) };
    }
    ctx.logger.error(`${what} was not posted: Slack refused it (${slackProblem(error)})`);
    return { kind: 'failed', period, error, ...digestFailure(error, ctx.now()) };
  }
}

// A person's digest whose post failed is posted again this many times at most, after these waits.
const POST_AGAIN_WAITS_MS = [1_000, 4_000];

/**
 * A person's digest, posted with `send` (sent once), and posted again after Slack failed (a 5xx, a
 * cut connection, no answer in time) only once it is not found in the channel by its mark: Slack
 * may have stored the post before its answer was lost. When the bot cannot look, it does not post
 * again (that could post it twice): Slack's failure is thrown, and the person told.
 */
async function postLookingFirst(
  ctx: DigestContext,
  channel: string,
  mark: MessageMark,
  what: string,
  send: () => Promise<{ ts?: string | undefined }>,
): Promise<{ ts?: string | undefined }> {
  // Slack's clock, not `ctx.now`: the channel is read back to the moment the post was begun.
  const since = new Date();
  for (let tries = 0; ; tries += 1) {
    try {
      return await send();
    } catch (error) {
      // A refusal (not_in_channel, ...) is Slack's answer; a rate limit postMarked waited out already.
      const passing = isPassingSlackFailure(error) && classifySlackError(error) !== 'rate_limited';
      const wait = POST_AGAIN_WAITS_MS[tries];
      if (!passing || wait === undefined || ctx.shutdown.aborted) throw error;
      if (!surelyNotDone(error)) {
        let found;
        try {
          found = await findPostedMessage(ctx.slack, { channel, threadTs: null, since }, mark, ctx.botId);
        } catch (lookError) {
          throw new MaybePostedError(error, lookError);
        }
        if (found) {
          ctx.logger.info(`${what} was posted, though Slack's answer was lost (${slackProblem(error)})`);
          return { ts: found.ts };
        }
      }
      try {
        await sleepFor(wait, undefined, { signal: ctx.shutdown });
      } catch {
        throw error;
      }
    }
  }
}

function slackProblem(error: unknown): string {
  const code = slackErrorCode(error) ?? String(error);
  switch (classifySlackError(error)) {
    case 'not_in_channel':
      return `${code}: invite the bot to the channel`;
    case 'channel_gone':
      // Slack answers so for a private channel the bot is not in, as for an ID that names no channel.
      return code === 'channel_not_found'
        ? `${code}: invite the bot to the channel (a private channel it is not in looks so to it), or check DIGEST_CHANNEL, or the channel where the digest was asked for`
        : `${code}: check DIGEST_CHANNEL, or the channel where the digest was asked for`;
    case 'missing_scope': {
      // Looking for an earlier post reads the channel's history; posting needs chat:write: Slack says which.
      const needed = (error as { data?: { needed?: unknown } }).data?.needed;
      const scope = typeof needed === 'string' && needed !== '' ? `the ${needed} scope` : 'a scope';
      return `${code}: SLACK_BOT_TOKEN lacks ${scope}; update the app from manifest.yml and reinstall it`;
    }
    default:
      return code;
  }
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
