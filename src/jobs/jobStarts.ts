import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type HeldLease, LeaseLostError, leaseHeld, RENEWED_LEASE_MS } from '../store/lease.js';
import { retryInBackground } from '../store/retryInBackground.js';
import type { Store } from '../store/store.js';
import type { JobDoor, JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';

/**
 * A job start, written under its queue job's id before Mintlify is asked to create the job. When
 * the process dies mid-start, the queue runs the same queue job again elsewhere: it finds the
 * start, never asks Mintlify a second time, and finishes it (the job it made) or tells the person.
 */
export interface JobStart {
  id: string;
  channel: string;
  /** The thread the card was meant for, if any. */
  threadTs: string | null;
  requestedBy: string;
  door: JobDoor;
  /** As the card would show it (trimmed). */
  prompt: string;
  at: string;
  /** Mintlify refused the job, and the person was told this. */
  refusal?: string;
  /** The refusal came before Mintlify made anything (a 4xx, a request never sent): it may be asked again. */
  madeNothing?: true;
  /**
   * Its request to Mintlify is claimed before it is sent (`claimAsk`), so a run again that finds no
   * claim knows Mintlify was never asked. A start written before claims were made has none.
   */
  claimsAsk?: true;
}

/**
 * Held while a start runs, from before the create to the card's post, and renewed while it works:
 * a crashed starter's lease lapses soon, and then the follower may post the card it left pending.
 */
export const START_LEASE_MS = RENEWED_LEASE_MS;
export const startLeaseName = (startId: string) => `start:${startId}`;

const startKey = (id: string) => `start:${id}`;
const threadStartKey = (channel: string, threadTs: string) => `thread-start:${channel}:${threadTs}`;
/**
 * How long a start holds the thread its card goes in, until its job's record names the thread:
 * longer than its door's work before the create (naming people, reading the thread) and Mintlify's
 * create may take (the create claims it again for as long), short enough that a start whose process died leaves the
 * thread's messages waiting a minute or two at most.
 */
const THREAD_START_MS = 2 * 60_000;
const askKey = (id: string) => `start-ask:${id}`;
// Longer than a queue job can wait to be run again; a start older than this is only clutter.
const KEEP_MS = 24 * 3_600_000;

/** How often a job created while Redis was away is tried again (startJob.ts), and the like. */
const RECORD_AGAIN_EVERY_MS = 2_000;
/**
 * How often, and for how long, a claim Redis may have taken without answering is tried to be
 * withdrawn: soon after Redis answers again, well before the start's request runs again (5 s after
 * it met Redis away) in this process or another.
 */
const WITHDRAW_EVERY_MS = 500;
const WITHDRAW_FOR_MS = 30 * 60_000;

/**
 * A start that cannot answer yet, and answers on its request's run again shortly
 * (processRequest.ts): the doors pass it on as they do Redis away (storeErrors.ts names each kind).
 * `waiting` says for what, in the log.
 */
export abstract class StartAwaitsError extends Error {
  abstract readonly waiting: string;
}

/** A start run again in the process that created its job while Redis was away, before the record is written. */
export class UnrecordedJobError extends StartAwaitsError {
  readonly waiting = 'a start waits for its job to be recorded';
  constructor(startId: string) {
    super(`the job of start ${startId} is not recorded yet`);
    this.name = 'UnrecordedJobError';
  }
}

/**
 * A start under way in another run of it (which holds its lease), or one that gave way to such a
 * run: its run again answers from what that run did.
 */
export class StartElsewhereError extends StartAwaitsError {
  readonly waiting = 'a start is under way in another run of it';
  constructor(startId: string) {
    super(`the start ${startId} is under way elsewhere`);
    this.name = 'StartElsewhereError';
  }
}

/**
 * A message in a thread whose job is starting (its door reads the thread, or Mintlify creates it): it waits for the job's
 * record, then goes to that job (a follow-up, or a card of its own elsewhere for a second start).
 */
export class ThreadStartingError extends StartAwaitsError {
  readonly waiting = 'a message waits for the job starting in its thread';
  constructor(channel: string, threadTs: string) {
    super(`a job is starting in the thread ${channel}/${threadTs}`);
    this.name = 'ThreadStartingError';
  }
}

/**
 * An edit of a message whose start (the message's own, or another edit's) is still under way: if
 * Mintlify refuses that one, this edit is the person's next try; if it makes a job, the edit is
 * only an edit. It waits to know which.
 */
export class EditWaitsError extends StartAwaitsError {
  readonly waiting = 'an edit waits for the start of the message it edits';
  constructor(channel: string, ts: string) {
    super(`a job is starting from the message ${channel}/${ts}`);
    this.name = 'EditWaitsError';
  }
}

/**
 * An edit of a reply in a job's thread while an earlier version of it is being sent to the job: if
 * the job gets that one, the edit is only an edit; if Mintlify refuses it, the job has neither. It
 * waits to know which, and answers its author then.
 */
export class ReplyEditWaitsError extends StartAwaitsError {
  readonly waiting = 'an edit waits for the reply it edits to reach its job';
  constructor(channel: string, ts: string) {
    super(`the reply ${channel}/${ts} is being sent to its job`);
    this.name = 'ReplyEditWaitsError';
  }
}

/** The one place that reads and writes job starts. */
export class JobStarts {
  /**
   * Starts whose job this process created while Redis was away and is still recording (start id
   * -> job id; see startJob.ts): their run again waits meanwhile.
   */
  readonly unrecorded = new Map<string, string>();
  /** How often a job in `unrecorded` is tried again; also the writes of onceRedisAnswers.ts. */
  readonly recordAgainEveryMs: number;
  /**
   * Claims of starts' requests to Mintlify that Redis may have taken without answering (start id ->
   * token). Nothing was asked under them: their run stopped when the claim's answer did not come.
   * Each is withdrawn once Redis answers (and gets one last try when the bot stops), so the start's
   * run again, here or in another process, finds the request unclaimed and asks, rather than tell
   * the person the start was cut short.
   */
  private readonly uncertainClaims = new Map<string, string>();

  constructor(
    private readonly store: Store,
    options: { recordAgainEveryMs?: number } = {},
  ) {
    this.recordAgainEveryMs = options.recordAgainEveryMs ?? RECORD_AGAIN_EVERY_MS;
  }

  /**
   * The bot is stopping: the claims still uncertain get one try to be withdrawn, within `withinMs`
   * (one left behind makes the start's run again elsewhere tell the person it was cut short), and
   * nothing is recorded or withdrawn here any more. Answers the ids of the jobs still unrecorded,
   * which nothing follows.
   */
  async stop(withinMs: number): Promise<string[]> {
    const claims = [...this.uncertainClaims];
    this.uncertainClaims.clear();
    const jobIds = [...this.unrecorded.values()];
    this.unrecorded.clear();
    if (claims.length > 0) {
      const withdrawn = Promise.allSettled(
        claims.map(([id, token]) => this.store.atomic.deleteIfValue(askKey(id), token)),
      );
      await Promise.race([withdrawn, delay(withinMs, undefined, { ref: false })]);
    }
    return jobIds;
  }

  async begin(start: JobStart): Promise<void> {
    await this.store.kv.set(startKey(start.id), start, KEEP_MS);
  }

  /** Mintlify refused the start: the same queue job run again answers the same. */
  async refused(start: JobStart, refusal: string, madeNothing = false): Promise<void> {
    await this.store.kv.set(
      startKey(start.id),
      { ...start, refusal, ...(madeNothing ? { madeNothing: true } : {}) },
      KEEP_MS,
    );
  }

  /**
   * Claims the start's one request to Mintlify, right before it is sent, while `lease` (the start's)
   * is ours: false when a run of the same start claimed it first. That run held the lease then, and
   * may have asked Mintlify (it may even be asking still, if its lease lapsed), so this one must not
   * ask again; a run again that finds it unclaimed knows Mintlify was never asked.
   * When the lease is gone, it throws as the lease's `lost` would, and claims nothing. A claim whose
   * answer never came (Redis away) may have landed: it is withdrawn (see `uncertainClaims`), by this
   * start's run again here before it claims, or in the background.
   */
  async claimAsk(id: string, lease: HeldLease): Promise<boolean> {
    const uncertain = this.uncertainClaims.get(id);
    if (uncertain !== undefined) await this.withdraw(id, uncertain);
    const token = randomUUID();
    try {
      return await lease.claim(askKey(id), token, KEEP_MS);
    } catch (error) {
      // Unless the lease was lost (nothing claimed then), the claim may have landed: Redis away, a dropped connection.
      if (!(error instanceof LeaseLostError)) this.withdrawOnceRedisAnswers(id, token);
      throw error;
    }
  }

  /** Deletes the claim only while it holds `token`: one made since by another run stands. */
  private async withdraw(id: string, token: string): Promise<void> {
    await this.store.atomic.deleteIfValue(askKey(id), token);
    if (this.uncertainClaims.get(id) === token) this.uncertainClaims.delete(id);
  }

  private withdrawOnceRedisAnswers(id: string, token: string): void {
    this.uncertainClaims.set(id, token);
    retryInBackground(
      async () => {
        await this.withdraw(id, token);
        return true;
      },
      {
        everyMs: WITHDRAW_EVERY_MS,
        forMs: WITHDRAW_FOR_MS,
        // Else withdrawn by the start's run again, or the bot is stopping.
        wanted: () => this.uncertainClaims.get(id) === token,
        retryOn: () => true, // a dropped connection fails with a plain error too
        giveUp: () => this.uncertainClaims.delete(id),
      },
    );
  }

  /** True while a run of the start holds its lease (from before Mintlify is asked to the card). */
  underWay(id: string): Promise<boolean> {
    return leaseHeld(this.store.atomic, startLeaseName(id));
  }

  get(id: string): Promise<JobStart | undefined> {
    return this.store.kv.get<JobStart>(startKey(id));
  }

  /**
   * Holds the thread a start's card goes in while Mintlify creates its job: false when another
   * start holds it (its job is about to own the thread). Released once the record names the
   * thread, or the start ends without a job (or is run again after it ended); a start whose process
   * died lets go when it lapses.
   * The door claims it first, as its handling begins (before it names people or reads the thread);
   * claimed again by the same start (to ask Mintlify), it is held two minutes from then.
   */
  async claimThread(channel: string, threadTs: string, startId: string): Promise<boolean> {
    const key = threadStartKey(channel, threadTs);
    if (!(await this.store.atomic.claim(key, startId, THREAD_START_MS))) return false;
    await this.store.atomic.extendIfValue(key, startId, THREAD_START_MS);
    return true;
  }

  /** Holds the thread two minutes more (a job whose record waits for Redis keeps it meanwhile). */
  async keepThread(channel: string, threadTs: string, startId: string): Promise<void> {
    await this.store.atomic.extendIfValue(threadStartKey(channel, threadTs), startId, THREAD_START_MS);
  }

  async releaseThread(channel: string, threadTs: string, startId: string): Promise<void> {
    await this.store.atomic.deleteIfValue(threadStartKey(channel, threadTs), startId);
  }

  /**
   * Whether a start (other than `except`) holds the thread: a message there waits for its job
   * (ThreadStartingError).
   */
  async threadStarting(channel: string, threadTs: string, except?: string): Promise<boolean> {
    const holder = await this.threadStartOf(channel, threadTs);
    return holder !== undefined && holder !== except;
  }

  /** The start that holds the thread, if one does. */
  threadStartOf(channel: string, threadTs: string): Promise<string | undefined> {
    return this.store.atomic.holder(threadStartKey(channel, threadTs));
  }
}

/** The job record this start made, if it got that far. */
export async function jobOfStart(ctx: JobsContext, start: JobStart): Promise<JobRecord | undefined> {
  const recent = await ctx.records.recentForUser(start.requestedBy, 50);
  return recent.find((record) => record.startId === start.id);
}
