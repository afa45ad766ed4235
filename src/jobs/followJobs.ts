import type { Logger } from '@slack/bolt';
import { type CheckResult, checkJob, type JobMemory, newJobMemory, releaseKeptLease } from './checkJob.js';
import { DueQueue } from './dueQueue.js';
import type { JobsContext } from './jobsContext.js';
import { tellInterruptedStarts } from './jobStarts.js';
import { PollBudget } from './pollBudget.js';
import {
  type Clock,
  checkDelayMs,
  jittered,
  type PollTiming,
  resumeDelayMs,
  retryDelayMs,
  systemClock,
} from './pollSchedule.js';

/**
 * Follows every unfinished job to its end: one timer, a queue ordered by when each job is due,
 * at most `concurrency` checks at once, and a request budget per project. What a check does is
 * `checkJob`; this file only decides when checks run.
 */

// Enough failed checks in a row to be an outage rather than a blip worth no one's attention.
const OUTAGE_AFTER = 20;

export interface FollowerOptions {
  timing: PollTiming;
  concurrency: number;
  requestsPerMinute: number;
  /** The project a job is charged to until its record has been read. */
  defaultProjectId: string;
  check: (jobId: string, memory: JobMemory, now: number) => Promise<CheckResult>;
  /** Every unfinished job in the store (read at start, then now and then for jobs another instance started). */
  unfinishedIds: () => Promise<string[]>;
  /** Run with each resync: finishes what a crashed instance left behind before its jobs had records. */
  recoverStarts?: () => Promise<void>;
  /** Gives back what a check kept for the next one (its poll lease), when the bot stops. */
  letGo?: (memory: JobMemory) => Promise<void>;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Wraps each check, so shutdown can wait for checks already running. */
  track?: <T>(work: () => Promise<T>) => Promise<T>;
}

interface Followed {
  memory: JobMemory;
  /** Matches the job's live entry in the queue; older entries are stale. */
  ticket: number;
  failures: number;
  running: boolean;
  /** `follow()` was called while a check ran: check again whatever that check concluded. */
  followAgain: boolean;
}

export class JobFollower {
  private readonly followed = new Map<string, Followed>();
  /** Jobs Mintlify no longer knows (404), or without a record: not picked up again from the store's index. */
  private readonly dropped = new Set<string>();
  private readonly queue = new DueQueue();
  private readonly budget: PollBudget;
  private readonly clock: Clock;
  private readonly random: () => number;
  private nextTicket = 0;
  private running = 0;
  private timer: { handle: unknown; at: number } | undefined;
  private resyncTimer: unknown;
  private started = false;
  private stopped = false;
  private problemLogged = false;
  private resyncFailing = false;
  private failuresInARow = 0;

  constructor(private readonly options: FollowerOptions) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.budget = new PollBudget({
      requestsPerMinute: options.requestsPerMinute,
      basePauseMs: options.timing.intervalMs,
      maxPauseMs: options.timing.maxIntervalMs,
    });
  }

  /** How many jobs are followed now. */
  get size(): number {
    return this.followed.size;
  }

  /** Picks up every unfinished job in the store; jobs that ended while the bot was down are announced by their first check. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.resync();
  }

  /** Stops scheduling checks. Checks already running finish under `track` (the in-flight drain). */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    this.timer = undefined;
    this.queue.clear();
  }

  /** After `stop()` and once running checks are done: gives back what checks kept, so other instances need not wait. */
  async letGo(): Promise<void> {
    const { letGo } = this.options;
    if (!letGo) return;
    await Promise.all([...this.followed.values()].map(({ memory }) => letGo(memory)));
  }

  /** A job started, or a follow-up reopened it: check it soon, at the fresh-job cadence. */
  follow(jobId: string): void {
    if (this.stopped) return;
    const entry = this.entry(jobId);
    this.dropped.delete(jobId);
    const { memory } = entry;
    memory.activeSince = this.clock.now(); // a new round of work: fresh cadence, not slow
    memory.slow = false;
    memory.redrawCard = true;
    memory.slackGone = false; // a follow-up came from the thread, so the bot can post there again
    entry.failures = 0;
    if (entry.running) entry.followAgain = true;
    else this.schedule(jobId, entry, jittered(this.options.timing.intervalMs, this.random));
  }

  private entry(jobId: string): Followed {
    let entry = this.followed.get(jobId);
    if (!entry) {
      entry = {
        memory: newJobMemory(this.options.defaultProjectId),
        ticket: 0,
        failures: 0,
        running: false,
        followAgain: false,
      };
      this.followed.set(jobId, entry);
    }
    return entry;
  }

  /** Follows the store's unfinished jobs this instance does not follow yet, then again later. */
  private async resync(): Promise<void> {
    if (this.stopped) return;
    try {
      const ids = await this.options.unfinishedIds();
      for (const jobId of ids) {
        if (this.followed.has(jobId) || this.dropped.has(jobId)) continue;
        this.schedule(jobId, this.entry(jobId), resumeDelayMs(this.options.timing, this.random));
      }
      await this.options.recoverStarts?.();
      this.resyncFailing = false;
    } catch (error) {
      // Once per outage: it is tried again every max interval, and the checks report the outage too.
      if (!this.resyncFailing)
        this.options.logger.error(`could not read the jobs to follow: ${String(error)}`);
      this.resyncFailing = true;
    }
    if (this.stopped) return;
    // Every max interval: a job another instance started (or one a lost write left behind) is picked
    // up about as soon as its own cadence would have checked it.
    this.resyncTimer = this.clock.setTimeout(() => void this.resync(), this.options.timing.maxIntervalMs);
  }

  private schedule(jobId: string, entry: Followed, delayMs: number): void {
    this.nextTicket += 1;
    entry.ticket = this.nextTicket;
    this.queue.push({
      at: this.clock.now() + delayMs,
      jobId,
      ticket: entry.ticket,
    });
    this.pump();
  }

  /** Starts every due check that the concurrency limit and the budget allow, then sleeps until the next. */
  private pump(): void {
    while (!this.stopped && this.running < this.options.concurrency) {
      const head = this.queue.peek();
      if (!head) return;
      const entry = this.followed.get(head.jobId);
      if (!entry || entry.ticket !== head.ticket || entry.running) {
        this.queue.pop(); // rescheduled, running or no longer followed
        continue;
      }
      const now = this.clock.now();
      if (head.at > now) return this.wakeAt(head.at);
      const wait = this.budget.take(entry.memory.projectId, now);
      if (wait > 0) return this.wakeAt(now + wait);
      this.queue.pop();
      void this.run(head.jobId, entry);
    }
  }

  private wakeAt(at: number): void {
    if (this.timer && this.timer.at <= at) return;
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    const handle = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(0, at - this.clock.now()),
    );
    this.timer = { handle, at };
  }

  private async run(jobId: string, entry: Followed): Promise<void> {
    entry.running = true;
    this.running += 1;
    let result: CheckResult;
    try {
      const check = () => this.options.check(jobId, entry.memory, this.clock.now());
      result = await (this.options.track ? this.options.track(check) : check());
    } catch (error) {
      result = { kind: 'retry', problem: error };
    } finally {
      entry.running = false;
      this.running -= 1;
    }
    if (!this.stopped) this.after(jobId, entry, result);
    this.pump();
  }

  private after(jobId: string, entry: Followed, result: CheckResult): void {
    this.report(result);
    const { memory } = entry;
    const job = {
      ageMs: this.clock.now() - (memory.activeSince ?? this.clock.now()),
      slow: memory.slow,
    };
    const { timing } = this.options;
    if (entry.followAgain) {
      entry.followAgain = false;
      return this.schedule(jobId, entry, jittered(timing.intervalMs, this.random));
    }
    switch (result.kind) {
      case 'following':
        entry.failures = 0;
        this.budget.recovered(memory.projectId);
        return this.schedule(jobId, entry, jittered(checkDelayMs(timing, job), this.random));
      case 'busy':
        return this.schedule(jobId, entry, jittered(checkDelayMs(timing, job), this.random));
      case 'rate_limited':
        this.budget.slowDown(memory.projectId, result.retryAfterMs, this.clock.now());
        this.options.logger.info(
          `Mintlify rate-limited job checks for ${memory.projectId}; slowing down to ${Math.round(this.budget.currentPerMinute(memory.projectId))}/min`,
        );
        entry.failures += 1;
        return this.schedule(jobId, entry, jittered(retryDelayMs(timing, job, entry.failures), this.random));
      case 'retry':
        entry.failures += 1;
        return this.schedule(jobId, entry, jittered(retryDelayMs(timing, job, entry.failures), this.random));
      case 'done':
        this.followed.delete(jobId);
        if (result.why !== 'finished') this.dropped.add(jobId);
        return;
    }
  }

  /**
   * Failures are logged once per streak, not once per job and check: a problem an operator must fix
   * (a refused key, the store away) at once, a run of passing failures (an outage) after a while.
   */
  private report(result: CheckResult): void {
    const { logger } = this.options;
    if (result.kind !== 'retry' && result.kind !== 'rate_limited') {
      if (this.problemLogged || this.failuresInARow >= OUTAGE_AFTER) logger.info('checking jobs works again');
      this.problemLogged = false;
      this.failuresInARow = 0;
      return;
    }
    this.failuresInARow += 1;
    if (result.kind === 'retry' && result.problem !== undefined && !this.problemLogged) {
      logger.error(`checking jobs fails: ${String(result.problem)}`);
      this.problemLogged = true;
    } else if (this.failuresInARow === OUTAGE_AFTER && !this.problemLogged) {
      logger.warn(
        `the last ${OUTAGE_AFTER} job checks failed (Mintlify or Slack is struggling); every job is still followed, with backoff`,
      );
    }
  }
}

/** The follower the app runs: real checks against Mintlify, Slack and the store. */
export function createJobFollower(
  ctx: JobsContext,
  extra: Pick<FollowerOptions, 'clock' | 'random' | 'track'> = {},
): JobFollower {
  const { poll } = ctx.config;
  return new JobFollower({
    timing: {
      intervalMs: poll.intervalMs,
      maxIntervalMs: poll.maxIntervalMs,
      slowIntervalMs: poll.slowIntervalMs,
    },
    concurrency: poll.concurrency,
    requestsPerMinute: poll.requestsPerMinute,
    defaultProjectId: ctx.config.mintlify.projectId,
    check: (jobId, memory, now) => checkJob(ctx, jobId, memory, now),
    unfinishedIds: () => ctx.records.unfinishedIds(),
    recoverStarts: () => tellInterruptedStarts(ctx),
    letGo: releaseKeptLease,
    logger: ctx.logger,
    ...extra,
  });
}
