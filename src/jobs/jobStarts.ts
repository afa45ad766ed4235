import { isPassingSlackFailure } from '../slack/slackErrors.js';
import { RENEWED_LEASE_MS, withRenewedLease } from '../store/lease.js';
import type { Store } from '../store/store.js';
import { interruptedStartText } from './jobAnswers.js';
import type { JobDoor, JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';

/**
 * A job start under way, written before Mintlify is asked to create the job. If the bot dies
 * before the job's record exists, the start is still here, and the person who asked is told,
 * instead of waiting on "Starting a docs agent job…" for ever.
 */
export interface PendingStart {
  id: string;
  channel: string;
  /** The thread the card was meant for, if any. */
  threadTs: string | null;
  requestedBy: string;
  door: JobDoor;
  /** As the card would show it (trimmed). */
  prompt: string;
  at: string;
}

/**
 * Held by the instance starting a job, from before the create to the card's post, and renewed
 * while it works: a crashed starter's lease lapses soon, and then a check may finish its work
 * (tell the person, or post the card).
 */
export const START_LEASE_MS = RENEWED_LEASE_MS;
export const startLeaseName = (startId: string) => `start:${startId}`;

const PENDING = 'starts:pending';
const startKey = (id: string) => `start:${id}`;
// Long past any restart; a start older than this is only clutter.
const KEEP_MS = 24 * 3_600_000;

/** The one place that reads and writes pending starts. */
export class JobStarts {
  constructor(private readonly store: Store) {}

  async begin(start: PendingStart): Promise<void> {
    await this.store.kv.set(startKey(start.id), start, KEEP_MS);
    await this.store.atomic.indexAdd(PENDING, start.id, Date.parse(start.at));
  }

  /**
   * The start became a job record, or failed and was answered: nothing left to recover. The start
   * itself is kept (a day), so the same queue job run again after a crash knows it began.
   */
  async end(id: string): Promise<void> {
    await this.store.atomic.indexRemove(PENDING, id);
  }

  get(id: string): Promise<PendingStart | undefined> {
    return this.store.kv.get<PendingStart>(startKey(id));
  }

  pendingIds(): Promise<string[]> {
    return this.store.atomic.indexAll(PENDING);
  }
}

/**
 * Tells each person whose start was cut short by a crash (its lease lapsed, no job record came of
 * it) that it may not have started. A start that did make a record is the follower's to finish.
 */
export async function tellInterruptedStarts(ctx: JobsContext): Promise<void> {
  for (const id of await ctx.starts.pendingIds()) {
    try {
      // Renewed while Slack is slow to take the message, so no other instance tells the person too.
      await withRenewedLease(ctx.store.atomic, startLeaseName(id), START_LEASE_MS, async () => {
        const start = await ctx.starts.get(id);
        if (start && !(await jobOfStart(ctx, start)) && !(await tellPerson(ctx, start))) return; // next time
        await ctx.starts.end(id);
      });
    } catch (error) {
      ctx.logger.warn(`could not settle the interrupted start ${id} yet: ${String(error)}`); // tried again later
    }
  }
}

/** The job record this start made, if it got that far. */
export async function jobOfStart(ctx: JobsContext, start: PendingStart): Promise<JobRecord | undefined> {
  const recent = await ctx.records.recentForUser(start.requestedBy, 50);
  return recent.find((record) => record.startId === start.id);
}

/** False when Slack could not be reached, so the person is told at the next try. */
async function tellPerson(ctx: JobsContext, start: PendingStart): Promise<boolean> {
  const text = interruptedStartText(start.prompt);
  const where = `${start.requestedBy} in ${start.channel}`;
  ctx.logger.warn(`a job start by ${where} was cut short by a restart; telling them`);
  if (start.door !== 'shortcut') {
    try {
      await ctx.slack.chat.postEphemeral({
        channel: start.channel,
        user: start.requestedBy,
        ...(start.threadTs ? { thread_ts: start.threadTs } : {}),
        text,
      });
      return true;
    } catch (error) {
      ctx.logger.info(`could not tell ${where} in the channel (${String(error)}); trying their DM`);
    }
  }
  // The shortcut's form is long closed: its answers go to the DM, as they do when nothing crashed.
  try {
    await ctx.slack.chat.postMessage({ channel: start.requestedBy, text, unfurl_links: false });
    return true;
  } catch (error) {
    ctx.logger.warn(
      `could not tell ${start.requestedBy} that their job start was cut short: ${String(error)}`,
    );
    return !isPassingSlackFailure(error); // a refusal will not change; a busy Slack may
  }
}
