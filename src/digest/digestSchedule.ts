import { previousScheduledRun } from '../queue/cron.js';
import type { Processor, WorkQueue } from '../queue/queue.js';
import { leaseHeld, RENEWED_LEASE_MS } from '../store/lease.js';
import type { DigestContext } from './digestContext.js';
import { type DigestPeriod, periodKey, periodOfRun } from './period.js';
import { postScheduledDigest, type ScheduledDigestOutcome, scheduledDigestLease } from './postDigest.js';

/**
 * The weekly digest on DIGEST_CRON in DIGEST_TIMEZONE, posted to DIGEST_CHANNEL: a job scheduler
 * on the `digest` queue, so each occurrence is one queue job however many workers run. A worker
 * that crashes half-way leaves the job to another (the queue's stalled-job recovery); the posted
 * record and the message's mark make sure it is posted once. At a worker's start it catches up:
 * when the latest scheduled run has no posted digest and no digest went to the channel since
 * (nothing ran then), that period is posted now.
 */

const SCHEDULER_ID = 'weekly-digest';
// A digest cut short (a stop, Mintlify or Slack away) is tried again a few times, a minute apart and more.
const TRIES: DigestTries = { attempts: 4, backoffMs: 60_000 };

/**
 * How often a digest job is tried, the first wait between tries (doubling), and how long after its
 * last failed try its week's catch-up is not queued (so a failure that lasts is tried hourly).
 */
export interface DigestTries {
  attempts: number;
  backoffMs: number;
  againAfterMs?: number;
}

/** A digest that failed for good (the bot not in the channel, Mintlify refusing) is tried again this much later. */
const DIGEST_AGAIN_AFTER_MS = 60 * 60_000;
/**
 * A digest another worker is posting is looked at again: first once its lease would have lapsed had
 * that worker died already (6 s), then every minute (gathering may take an hour of analytics
 * waits), so a worker that dies later has its digest taken over within a minute.
 */
const BEING_POSTED_FIRST_AGAIN_MS = RENEWED_LEASE_MS + 1_000;
const BEING_POSTED_AGAIN_MS = 60_000;

/** What a process without the digest's settings says when it finds the schedule another put back. */
const NOT_SET_UP_HERE =
  'this process has no weekly digest (DIGEST_CHANNEL unset, or DIGEST_CRON=off) while another one schedules it: ' +
  'give every process with the worker role the same DIGEST_* variables';

/** A digest to post: of `period` (a catch-up), or of the week before the run (a scheduled one). */
export interface DigestJob {
  period?: DigestPeriod;
  /** How often it found the digest being posted by another worker. */
  busyChecks?: number;
}

/**
 * Adds, updates or removes the scheduler as the configuration says, then queues the catch-up if the
 * latest occurrence's digest was not posted. `quiet`: the periodic check, logged at debug only.
 */
export async function scheduleDigest(
  ctx: DigestContext,
  queue: WorkQueue<DigestJob>,
  options: { quiet?: boolean; tries?: DigestTries } = {},
): Promise<void> {
  const { attempts, backoffMs } = options.tries ?? TRIES;
  const { channel, cron: pattern, timezone } = ctx.config.digest;
  if (!channel || !pattern) {
    // DIGEST_CHANNEL unset, or DIGEST_CRON=off, since the last start: no digest on a schedule.
    const removed = await queue.unschedule(SCHEDULER_ID);
    // Removed at the start: the operator turned it off. Found again later: another process with the
    // digest's settings put it back, and the two would take turns removing and adding it.
    if (removed && options.quiet) ctx.logger.warn(`removed the weekly digest's schedule: ${NOT_SET_UP_HERE}`);
    if (channel && !options.quiet) {
      ctx.logger.info(
        `no weekly digest scheduled (DIGEST_CRON=off): \`npm run digest\` posts it to ${channel}`,
      );
    }
    return;
  }
  await queue.schedule(
    SCHEDULER_ID,
    { pattern, timezone },
    { name: 'scheduled', data: {}, attempts, backoffMs },
  );
  const missed = previousScheduledRun(pattern, timezone, ctx.now());
  const period = missed && periodOfRun(missed, timezone);
  const posted = period && (await ctx.records.posted(period, channel));
  // Written again with the life of a posted record: versions before gave it 92 days, shorter than a
  // yearly schedule's look-back, after which the catch-up would post it again.
  if (posted) await ctx.records.markPosted(posted);
  // A digest went to the channel at or after that run: the run was not missed, the schedule moved
  // (Monday's to Friday, say, deployed on a Wednesday). Its week is older than the one just posted.
  const last = await ctx.records.lastPosted(channel);
  const postedSince = missed !== undefined && last !== undefined && Date.parse(last) >= missed.getTime();
  const due =
    period &&
    !posted &&
    !postedSince &&
    !(await ctx.records.failedRecently(period, channel)) &&
    // Being gathered by a worker right now (its scheduled run): a catch-up would only wait on it.
    !(await leaseHeld(ctx.store.atomic, scheduledDigestLease(period, channel)));
  if (due) {
    // One catch-up per period, however many workers start at once; posted once (see postScheduledDigest).
    await queue.add(
      'catch-up',
      { period },
      { jobId: `catch-up-${channel}-${periodKey(period)}`, attempts, backoffMs },
    );
  }
  const line = `weekly digest scheduled "${pattern}" (${timezone}) to ${channel}`;
  if (options.quiet) ctx.logger.debug(line);
  else ctx.logger.info(line);
}

/** The `digest` queue's processor. `contextFor` gives the digest a context that stops waiting on `signal`. */
export function digestProcessor(
  contextFor: (signal: AbortSignal) => DigestContext,
  tries: Pick<DigestTries, 'againAfterMs'> = {},
): Processor<DigestJob> {
  return async (job, signal) => {
    const ctx = contextFor(signal);
    const { channel, cron: pattern, timezone } = ctx.config.digest;
    // Only processes with the digest's settings take its jobs (worker.ts).
    if (!channel || !pattern) return undefined;
    const why = job.name === 'catch-up' ? 'catch-up' : 'scheduled';
    // An occurrence older than the latest (no worker ran for weeks): only the latest week is news.
    const latest = previousScheduledRun(pattern, timezone, ctx.now());
    if (
      why === 'scheduled' &&
      job.scheduledFor !== undefined &&
      latest &&
      job.scheduledFor < latest.getTime()
    ) {
      ctx.logger.info(
        `skipped the digest of an occurrence long past (${new Date(job.scheduledFor).toISOString()})`,
      );
      return undefined;
    }
    // A catch-up queued for a week that is no longer the latest (no worker with the digest's settings
    // ran since): the latest week's digest is the news, as for a scheduled occurrence long past.
    if (
      why === 'catch-up' &&
      job.data.period &&
      latest &&
      periodKey(job.data.period) !== periodKey(periodOfRun(latest, timezone))
    ) {
      ctx.logger.info(`skipped the catch-up digest of a week long past (${periodKey(job.data.period)})`);
      return undefined;
    }
    // The week before the occurrence, not before now: a worker may take it up late.
    const period =
      job.data.period ?? periodOfRun(new Date(job.scheduledFor ?? ctx.now().getTime()), timezone);
    const outcome = await postScheduledDigest(ctx, period, channel);
    report(ctx, outcome, why);
    // Its lease is held, maybe by a worker that died posting it, or a digest asked for is being
    // prepared: look again a while later.
    if (outcome.kind === 'in_progress' || outcome.kind === 'waiting_turn') {
      const busyChecks = (job.data.busyChecks ?? 0) + 1;
      const delayMs = busyChecks === 1 ? BEING_POSTED_FIRST_AGAIN_MS : BEING_POSTED_AGAIN_MS;
      return { again: { delayMs, data: { ...job.data, period, busyChecks } } };
    }
    // Not posted: the queue tries it again later (here or in another worker), as long as attempts
    // remain; its week's catch-up waits an hour after the last failed try.
    if (outcome.kind === 'failed') {
      // Cut short by a stop, it is no failure of the digest: its next try may come at once.
      const againAfterMs = ctx.shutdown.aborted ? 0 : (tries.againAfterMs ?? DIGEST_AGAIN_AFTER_MS);
      await ctx.records.markFailed(period, channel, ctx.now(), againAfterMs).catch(() => undefined);
      throw new Error(`the ${why} digest for ${periodKey(period)} was not posted`);
    }
    return undefined;
  };
}

function report(ctx: DigestContext, outcome: ScheduledDigestOutcome, why: 'scheduled' | 'catch-up'): void {
  const what = `${why} digest for ${periodKey(outcome.period)}`;
  switch (outcome.kind) {
    case 'posted':
      // A first start posts the latest week's as well: no digest of it was posted, down or not yet set up.
      if (why === 'catch-up')
        ctx.logger.info(`posted the ${what}, missed while the bot was down (or before it was set up)`);
      return;
    case 'already_posted':
      ctx.logger.info(`${what}: already posted (ts ${outcome.record.ts})`);
      return;
    case 'in_progress':
      // Looked at again while the other gathers: not worth a line each time.
      ctx.logger.debug(`${what}: another worker is posting it`);
      return;
    case 'waiting_turn':
      ctx.logger.debug(`${what}: waits while a digest asked for is prepared`);
      return;
    case 'failed':
      return; // logged where it failed, once
  }
}
