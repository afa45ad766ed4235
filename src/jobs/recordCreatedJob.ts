import { withLease } from '../store/lease.js';
import { retryInBackground } from '../store/retryInBackground.js';
import { isStoreUnavailable, storeTrouble } from '../store/storeErrors.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { START_LEASE_MS, startLeaseName } from './jobStarts.js';

/**
 * Recording a job Mintlify has just created, and keeping its record in this process while Redis
 * is away, so that a job that exists is followed once Redis answers.
 */

/** How long a created job's record is tried again while Redis is away. */
const KEEP_UNRECORDED_MS = 30 * 60_000;

/** A job Mintlify created whose record Redis could not take yet. */
interface UnrecordedJob {
  record: JobRecord;
  /** Whether its agent use was counted in the rate ledger. */
  counted: boolean;
}

/**
 * Writes the record of a job Mintlify has just created. Nothing else knows the job yet: when Redis
 * is away, this process keeps the record until Redis answers (see `keepUntilRecorded`).
 */
export async function recordCreated(
  ctx: JobsContext,
  record: JobRecord,
  /** The count of its agent use in the rate ledger, under way. */
  counting: Promise<{ counted: boolean }>,
): Promise<void> {
  try {
    await ctx.records.save(record);
  } catch (error) {
    if (isStoreUnavailable(error) && record.startId !== undefined) {
      ctx.logger.warn(
        `job ${record.jobId} was created at Mintlify, but ${storeTrouble(error)}: this process records it once Redis answers`,
      );
      const { counted } = await counting;
      keepUntilRecorded(ctx, record.startId, { record, counted });
    } else {
      ctx.logger.error(
        `job ${record.jobId} was created at Mintlify, but could not be recorded (${String(error)}): it is not followed`,
      );
    }
    throw error;
  }
  ctx.onJobActive(record.jobId);
}

/**
 * Keeps a created job's record in this process and writes it once Redis answers, trying every few
 * seconds under the start's lease: then it is followed, and the follower posts its card. The
 * start's own run again (its request's queue job runs again once Redis answers) holds that lease
 * too, so the two never overlap. Run here, it waits while the record is kept (UnrecordedJobError),
 * then answers from the record; run in another process before the record is written, it tells the
 * person the start was interrupted (its words say the job may have started anyway), and the card
 * follows.
 */
function keepUntilRecorded(ctx: JobsContext, startId: string, created: UnrecordedJob): void {
  const { jobId, channel } = created.record;
  const thread = created.record.pendingCard?.threadTs ?? null;
  ctx.starts.unrecorded.set(startId, jobId);
  // The start's hold of its thread lasts until the record is written (see startHeld).
  const letThreadGo = () =>
    thread === null ? undefined : void ctx.starts.releaseThread(channel, thread, startId).catch(() => {});
  retryInBackground(
    async () => {
      if (thread !== null) await ctx.starts.keepThread(channel, thread, startId).catch(() => {});
      const held = await withLease(ctx.store.atomic, startLeaseName(startId), START_LEASE_MS, async () => {
        await recordKept(ctx, created);
        ctx.starts.unrecorded.delete(startId);
        letThreadGo();
        ctx.onJobActive(jobId);
      });
      // Not held: the start's run again has the lease for a moment, and waits for the record.
      return held.ran || 'its start kept it busy';
    },
    {
      everyMs: ctx.starts.recordAgainEveryMs,
      forMs: KEEP_UNRECORDED_MS,
      wanted: () => ctx.starts.unrecorded.has(startId), // else the bot is stopping
      retryOn: isStoreUnavailable,
      giveUp: (why) => {
        ctx.starts.unrecorded.delete(startId);
        letThreadGo();
        ctx.logger.error(
          `job ${jobId} was created at Mintlify, but could not be recorded (${why}): it is not followed`,
        );
      },
    },
  );
}

/** The agent use a job's creation counts as, in the rate ledger. */
export const createUse = (jobId: string) => `create:${jobId}`;

/**
 * Writes a kept record, unless one is stored already (a write that timed out may have landed, and
 * the follower may have posted the card since). The agent use is counted here if it could not be
 * when the job was created (a count that timed out but landed is the same use, counted once).
 */
async function recordKept(ctx: JobsContext, kept: UnrecordedJob): Promise<void> {
  const { record } = kept;
  // One stored already may lack its lookups (its write was cut off between the two): touched, it gets them.
  if (!(await ctx.records.update(record.jobId, (stored) => stored))) await ctx.records.save(record);
  if (!kept.counted)
    await ctx.ledger
      .recordUse(record.projectId, createUse(record.jobId), Date.parse(record.createdAt))
      .catch(() => undefined);
  ctx.logger.info(`job ${record.jobId}: recorded once Redis answered again`);
}
