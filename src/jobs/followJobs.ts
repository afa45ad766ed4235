import type { Logger } from '@slack/bolt';
import type { Processor, WorkQueue, WorkerOptions } from '../queue/queue.js';
import { type CheckResult, checkJob, type JobMemory, newJobMemory } from './checkJob.js';
import { FINISHED, type JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { againOnceRedisAnswers } from './onceRedisAnswers.js';
import { isStoreUnavailable, redisRefusalOf } from '../store/storeErrors.js';
import { checkDelayMs, jittered, type PollTiming, resumeDelayMs, retryDelayMs } from './pollSchedule.js';

/**
 * Follows every unfinished job to its end on the `follow` queue: one queue job per Mintlify job
 * (its id is the job's, so the whole deployment holds one pending check of it), run again after
 * the delay its cadence asks for, under one rate limiter for every process. What a check does is
 * `checkJob`; this file maps its result to the queue, queues the first check of a new job, and
 * makes sure every unfinished job has one (`followUnfinishedJobs`).
 */

/** One pending check of one job: what the next check needs to know, carried by the queue. */
export interface FollowCheck {
  jobId: string;
  memory: JobMemory;
  /** Failed checks in a row, for the backoff. */
  failures: number;
}

/** The queue job id of a job's check: one per Mintlify job in the whole deployment. */
export const followJobId = (jobId: string) => `job-${jobId}`;

// Enough failed checks in a row to be an outage rather than a blip worth no one's attention.
const OUTAGE_AFTER = 20;

/** POLL_CONCURRENCY and POLL_REQUESTS_PER_MINUTE as the queue's worker options. */
export function followWorkerOptions(poll: JobsContext['config']['poll']): WorkerOptions {
  // BullMQ's limiter counts fixed windows, so any sliding window may hold one window's worth more:
  // windows of a tenth of a second keep that to 1 % of the budget over 10 s, and spread the reads.
  const max = Math.max(1, Math.floor(poll.requestsPerMinute / 600));
  return {
    concurrency: poll.concurrency,
    limiter: { max, durationMs: Math.round((60_000 * max) / poll.requestsPerMinute) },
  };
}

/** How long after a refused follow the add is tried once more (see followJob). */
const REFOLLOW_AFTER_MS = 1_500;
/** How long a job's check is tried again while Redis is away: then the reconciliation has it. */
const FOLLOW_AGAIN_FOR_MS = 10 * 60_000;
/** Checks queued at once when every unfinished job is followed again. */
const ADDS_IN_FLIGHT = 100;

/** A job started, or a follow-up reopened it: check it soon, at the fresh-job cadence. */
export async function followJob(
  ctx: JobsContext,
  queue: WorkQueue<FollowCheck>,
  jobId: string,
  random: () => number = Math.random,
): Promise<void> {
  const memory: JobMemory = {
    ...newJobMemory(ctx.config.mintlify.projectId),
    activeSince: ctx.now().getTime(),
    redrawCard: true,
  };
  const delayMs = jittered(ctx.config.poll.intervalMs, random);
  const data = { jobId, memory, failures: 0 };
  await queue.add('check', data, { jobId: followJobId(jobId), delayMs });
  // A check may hold the id: if it is the one ending the job right now (it read the record before
  // this reopen), its id is free again in a moment. Asked once more then, rather than leave the job
  // unfollowed until the next reconciliation; refused again, a check is following it. Asked in any
  // case: with BullMQ, an add can read as ours when that check finished and freed the id meanwhile.
  setTimeout(() => {
    queue.add('check', data, { jobId: followJobId(jobId), delayMs }).catch((error: unknown) => {
      // The bot stopped meanwhile: its queue is closed, and the next start follows the job.
      if (/is closed$/.test(error instanceof Error ? error.message : '')) return;
      ctx.logger.warn(
        `job ${jobId} could not be queued for following: ${redisRefusalOf(error) ?? String(error)}`,
      );
    });
  }, REFOLLOW_AFTER_MS).unref();
}

/**
 * `followJob` for a job that just started or reopened, in the background: when the queue cannot take
 * the check (Redis away), it is tried again every few seconds until it can, rather than leave the job
 * to the next reconciliation (within 10 minutes).
 */
export function followActiveJob(ctx: JobsContext, queue: WorkQueue<FollowCheck>, jobId: string): void {
  const notQueued = (why: string) => `job ${jobId} could not be queued for following: ${why}`;
  followJob(ctx, queue, jobId).catch((error: unknown) => {
    if (!isStoreUnavailable(error)) {
      ctx.logger.warn(`${notQueued(String(error))}; the next check of the queues follows it`);
      return;
    }
    ctx.logger.warn(`${notQueued(String(error))}; tried again once Redis answers`);
    againOnceRedisAnswers(
      ctx,
      async () => {
        await followJob(ctx, queue, jobId);
        ctx.logger.info(`job ${jobId} is queued for following`);
      },
      {
        forMs: FOLLOW_AGAIN_FOR_MS,
        // Unfinished on its record: a worker's check of the queues (at its start, every 10 minutes) has it.
        undone: (why) => ctx.logger.warn(`${notQueued(why)}; the next check of the queues follows it`),
      },
    );
  });
}

/**
 * At a worker's start: every unfinished job in the store gets its check, if it has none (a queue
 * emptied by a Redis restart, or the in-memory queue after a restart). Spread over one interval.
 */
export async function followUnfinishedJobs(
  ctx: JobsContext,
  queue: WorkQueue<FollowCheck>,
  random: () => number = Math.random,
): Promise<number> {
  let added = 0;
  const ids = await ctx.records.unfinishedIds();
  // Many adds in flight at once share the connection's round trips (node-redis pipelines them):
  // one after another, 10,000 unfinished jobs took 8-13 s to be queued after a restart.
  for (let start = 0; start < ids.length; start += ADDS_IN_FLIGHT) {
    const results = await Promise.all(
      ids.slice(start, start + ADDS_IN_FLIGHT).map((jobId) => {
        const data = { jobId, memory: newJobMemory(ctx.config.mintlify.projectId), failures: 0 };
        const delayMs = resumeDelayMs(ctx.config.poll, random);
        return queue.add('check', data, { jobId: followJobId(jobId), delayMs });
      }),
    );
    added += results.filter(Boolean).length;
  }
  return added;
}

/** The `follow` queue's processor. */
export function followProcessor(
  ctx: JobsContext,
  random: () => number = Math.random,
): Processor<FollowCheck> {
  const report = failureReport(ctx.logger);
  const timing: PollTiming = ctx.config.poll;
  return async (job, signal) => {
    const { jobId } = job.data;
    const memory: JobMemory = { ...job.data.memory };
    const now = Date.now();
    let result: CheckResult;
    try {
      result = await checkJob(ctx, jobId, memory, now);
    } catch (error) {
      result = { kind: 'retry', problem: error };
    }
    const age = { ageMs: Date.now() - (memory.activeSince ?? now), slow: memory.slow };
    const again = (delayMs: number, failures: number) => ({
      again: { delayMs: jittered(delayMs, random), data: { jobId, memory, failures } },
    });
    // Cut short by the bot's stop (its wait between Mintlify's retries aborted): no failure of the
    // check, nothing to log; back on the queue at once, for another worker.
    if ((signal?.aborted || ctx.stopping.aborted) && result.kind === 'retry') {
      return { again: { delayMs: 0, data: { jobId, memory, failures: job.data.failures } } };
    }
    report(result);
    switch (result.kind) {
      case 'following':
        return again(checkDelayMs(timing, age), 0);
      case 'busy':
        return again(checkDelayMs(timing, age), job.data.failures);
      case 'retry':
        return again(retryDelayMs(timing, age, job.data.failures + 1), job.data.failures + 1);
      case 'rate_limited': {
        const waitMs = result.retryAfterMs ?? retryDelayMs(timing, age, job.data.failures + 1);
        ctx.logger.info(
          `Mintlify rate-limited job checks; no job is checked for ${Math.ceil(waitMs / 1000)} s`,
        );
        return { rateLimited: { waitMs } };
      }
      case 'done': {
        if (result.why !== 'finished') return undefined;
        let record: JobRecord | undefined;
        try {
          record = await ctx.records.get(jobId);
        } catch (error) {
          // Checked again shortly: the job is settled, so that check only reads it and goes on from here.
          ctx.logger.warn(`job ${jobId}: its end could not be read back: ${String(error)}`);
          return again(retryDelayMs(timing, age, job.data.failures + 1), job.data.failures + 1);
        }
        // A follow-up may have reopened the job while this check was ending it: keep following.
        if (record && !FINISHED.has(record.status) && record.goneAt === undefined) {
          const fresh = { ...newJobMemory(memory.projectId), activeSince: Date.now(), redrawCard: true };
          return {
            again: {
              delayMs: jittered(timing.intervalMs, random),
              data: { jobId, memory: fresh, failures: 0 },
            },
          };
        }
        if (record && ctx.onJobFinished) {
          try {
            await ctx.onJobFinished(record);
          } catch (error) {
            // Checked again shortly: the job is settled, so that check only tries this again.
            ctx.logger.warn(`job ${jobId}: its preview could not be queued: ${String(error)}`);
            return again(retryDelayMs(timing, age, job.data.failures + 1), job.data.failures + 1);
          }
        }
        return undefined;
      }
    }
  };
}

/**
 * Failures are logged once per streak, not once per job and check: a problem an operator must fix
 * (a refused key, the store away) at once, a run of passing failures (an outage) after a while.
 */
function failureReport(logger: Logger): (result: CheckResult) => void {
  let problemLogged = false;
  let failuresInARow = 0;
  return (result) => {
    if (result.kind !== 'retry' && result.kind !== 'rate_limited') {
      if (problemLogged || failuresInARow >= OUTAGE_AFTER) logger.info('checking jobs works again');
      problemLogged = false;
      failuresInARow = 0;
      return;
    }
    failuresInARow += 1;
    if (result.kind === 'retry' && result.problem !== undefined && !problemLogged) {
      logger.error(`checking jobs fails: ${redisRefusalOf(result.problem) ?? String(result.problem)}`);
      problemLogged = true;
    } else if (failuresInARow === OUTAGE_AFTER && !problemLogged) {
      logger.warn(
        `the last ${OUTAGE_AFTER} job checks failed (Mintlify or Slack is struggling); every job is still followed, with backoff`,
      );
    }
  };
}
