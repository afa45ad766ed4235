import type { Logger } from '@slack/bolt';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cron } from 'croner';
import { cronOptions, previousScheduledRun } from './cron.js';
import type { AddOptions, JobCounts, Processor, ProcessorResult, QueueJob, Submission } from './queue.js';
import type { QueueOptions, Queues, WorkerOptions, WorkQueue } from './queue.js';
import { WITHDRAWN_KEPT_MS } from './queue.js';

/** As on Redis: failed jobs stay a day (and hold their id meanwhile). */
const FAILED_KEPT_MS = 24 * 60 * 60 * 1000;
/** As on Redis (bullmqQueues.ts): at most this many completed and failed jobs are kept, the newest. */
const COMPLETED_KEPT_COUNT = 5_000;
const FAILED_KEPT_COUNT = 1_000;
const CLOSE_OVERRUN_MS = 1_000;

interface Entry<T> extends QueueJob<T> {
  data: T;
  attemptsMade: number;
  scheduledFor?: number;
  readonly options: AddOptions;
  state: 'waiting' | 'delayed' | 'active' | 'finished';
  keptUntil?: number;
}

let lastStamp = 0;
/** A job's `addedAt`: the clock, made distinct for every add of this process (a submission's stamp). */
function nextStamp(now: number): number {
  lastStamp = Math.max(now, lastStamp + 1);
  return lastStamp;
}

/** Every timer here is unref'd: a queue in memory never keeps the process alive. */
function later(ms: number, fn: () => void): NodeJS.Timeout {
  return setTimeout(fn, Math.max(0, ms)).unref();
}

class MemoryQueue<T> implements WorkQueue<T> {
  /** No job starts any more. */
  private closing = false;
  /** Stopping: a delayed job is no longer due (what waits still starts, in the stop's grace). */
  private draining = false;
  /** No add is taken any more: set once every queue's running jobs have settled. */
  private closed = false;
  private readonly jobs = new Map<string, Entry<T>>();
  private readonly waiting: Entry<T>[] = [];
  private readonly running = new Map<Entry<T>, { controller: AbortController; done: Promise<void> }>();
  private readonly schedulers = new Map<string, Cron>();
  /** Withdrawn submissions, oldest first: job id -> stamp, or 'every' add of that id, and when the mark lapses. */
  private readonly withdrawals = new Map<string, { mark: number | 'every'; until: number }>();
  /** The finished jobs kept for their ids, oldest first: a burst of requests holds no more than Redis would. */
  private readonly kept = { completed: new Set<Entry<T>>(), failed: new Set<Entry<T>>() };
  private worker?: { processor: Processor<T>; options: WorkerOptions };
  private window = { start: Number.NEGATIVE_INFINITY, started: 0 };
  private pausedUntil = 0;
  private wake?: NodeJS.Timeout;
  private nextId = 1;

  constructor(
    readonly name: string,
    private readonly keepCompletedMs: number,
    private readonly keepFailedMs: number,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  async add(name: string, data: T, options: AddOptions & { scheduledFor?: number } = {}): Promise<boolean> {
    return this.put(name, data, options) !== undefined;
  }

  submit(name: string, data: T, options: AddOptions & { jobId: string }): Submission {
    try {
      // Refused: a stamp no job holds, so remove(jobId, stamp) leaves the earlier job alone.
      return {
        stamp: this.put(name, data, options)?.addedAt ?? nextStamp(this.now()),
        queued: Promise.resolve(),
        mayHaveLanded: false,
        abandon: () => {}, // added at once: nothing waits to be sent
      };
    } catch (error) {
      // In one process, a refused add left nothing behind.
      return {
        stamp: nextStamp(this.now()),
        queued: Promise.reject(error),
        mayHaveLanded: false,
        abandon: () => {},
      };
    }
  }

  async withdraw(jobId: string, stamp?: number): Promise<void> {
    const now = this.now();
    for (const [id, { until }] of this.withdrawals) {
      if (until > now) break;
      this.withdrawals.delete(id);
    }
    this.withdrawals.delete(jobId); // the newest last
    this.withdrawals.set(jobId, { mark: stamp ?? 'every', until: now + WITHDRAWN_KEPT_MS });
  }

  async withdrawn(job: QueueJob<T>): Promise<boolean> {
    const withdrawal = this.withdrawals.get(job.id);
    if (!withdrawal || withdrawal.until <= this.now()) return false;
    return withdrawal.mark === 'every' || withdrawal.mark === job.addedAt;
  }

  /** The new entry, or undefined when a job with its id is there already. */
  private put(name: string, data: T, options: AddOptions & { scheduledFor?: number }): Entry<T> | undefined {
    if (this.closed) throw new Error(`queue ${this.name} is closed`);
    const id = options.jobId ?? String(this.nextId++);
    const existing = this.jobs.get(id);
    const now = this.now();
    if (existing && (existing.state !== 'finished' || (existing.keptUntil ?? 0) > now)) return undefined;
    const entry: Entry<T> = {
      id,
      name,
      data,
      addedAt: nextStamp(now),
      attemptsMade: 0,
      options,
      state: 'waiting',
    };
    if (options.scheduledFor !== undefined) entry.scheduledFor = options.scheduledFor;
    this.jobs.set(id, entry);
    if (options.delayMs && options.delayMs > 0) this.delay(entry, options.delayMs);
    else this.enqueue(entry);
    return entry;
  }

  async remove(jobId: string, stamp?: number): Promise<boolean> {
    const entry = this.jobs.get(jobId);
    if (!entry || (entry.state !== 'waiting' && entry.state !== 'delayed')) return false;
    if (stamp !== undefined && entry.addedAt !== stamp) return false;
    this.jobs.delete(jobId);
    const at = this.waiting.indexOf(entry);
    if (at >= 0) this.waiting.splice(at, 1);
    entry.state = 'finished';
    return true;
  }

  process(processor: Processor<T>, options: WorkerOptions): void {
    if (this.worker) throw new Error(`queue ${this.name} already has a worker`);
    this.worker = { processor, options };
    this.pump();
  }

  schedule: WorkQueue<T>['schedule'] = async (schedulerId, repeat, job) => {
    this.schedulers.get(schedulerId)?.stop();
    const occurrence = (self: Cron) => {
      // The occurrence it was due for (croner gives when it fired, which a machine that slept makes late).
      const firedAt = self.currentRun() ?? new Date();
      const scheduledFor = (
        previousScheduledRun(repeat.pattern, repeat.timezone, firedAt) ?? firedAt
      ).getTime();
      void this.add(job.name, job.data, { ...job, scheduledFor }).catch((error: unknown) =>
        this.logger.error(String(error)),
      );
    };
    const cron = new Cron(repeat.pattern, { ...cronOptions(repeat.timezone), unref: true }, occurrence);
    this.schedulers.set(schedulerId, cron);
  };

  async unschedule(schedulerId: string): Promise<boolean> {
    this.schedulers.get(schedulerId)?.stop();
    return this.schedulers.delete(schedulerId);
  }

  async counts(): Promise<JobCounts> {
    const delayed = [...this.jobs.values()].filter((entry) => entry.state === 'delayed').length;
    return { waiting: this.waiting.length, active: this.running.size, delayed };
  }

  /**
   * What waits starts no more once the grace is over, nor once nothing runs; what still runs after
   * graceMs is aborted. Within the grace, the jobs waiting their turn (a burst of requests larger than
   * the concurrency) still start: no other process would take them up, and each was acknowledged
   * ("its card will appear here"). A delayed job stays delayed. False: a processor outlasted the
   * grace and its overrun. Adds are still taken (see `closeForAdds`).
   */
  async shutDown(graceMs: number): Promise<boolean> {
    this.draining = true;
    for (const cron of this.schedulers.values()) cron.stop();
    // A run's end starts the next waiting job (pump, in its `finally`) before its `done` settles.
    const drained = (async () => {
      while (this.running.size > 0)
        await Promise.allSettled([...this.running.values()].map((run) => run.done));
      return true;
    })();
    const inGrace = await Promise.race([drained, sleep(graceMs, false, { ref: false })]);
    this.closing = true;
    clearTimeout(this.wake);
    if (inGrace) return true;
    const settled = Promise.allSettled([...this.running.values()].map((run) => run.done)).then(() => true);
    for (const run of this.running.values()) run.controller.abort(new Error('the worker is closing'));
    return Promise.race([settled, sleep(CLOSE_OVERRUN_MS, false, { ref: false })]);
  }

  closeForAdds(): void {
    this.closed = true;
  }

  private enqueue(entry: Entry<T>, front = false): void {
    entry.state = 'waiting';
    if (front) this.waiting.unshift(entry);
    else this.waiting.push(entry);
    this.pump();
  }

  private delay(entry: Entry<T>, ms: number): void {
    entry.state = 'delayed';
    later(ms, () => entry.state === 'delayed' && !this.draining && this.enqueue(entry));
  }

  private pump(): void {
    const worker = this.worker;
    if (!worker) return;
    while (!this.closing && this.running.size < worker.options.concurrency && this.waiting.length > 0) {
      const now = this.now();
      let resumeAt = this.pausedUntil;
      const limiter = worker.options.limiter;
      if (limiter) {
        // A window opens with the first start after the last one closed, as BullMQ's limiter does.
        if (now - this.window.start >= limiter.durationMs) this.window = { start: now, started: 0 };
        if (this.window.started >= limiter.max)
          resumeAt = Math.max(resumeAt, this.window.start + limiter.durationMs);
      }
      if (resumeAt > now) {
        clearTimeout(this.wake);
        this.wake = later(resumeAt - now, () => this.pump());
        return;
      }
      this.window.started++;
      const entry = this.waiting.shift();
      if (entry) this.start(entry, worker.processor);
    }
  }

  private start(entry: Entry<T>, processor: Processor<T>): void {
    entry.state = 'active';
    const controller = new AbortController();
    const { id, name, data, attemptsMade, addedAt, scheduledFor } = entry;
    const job = {
      id,
      name,
      data,
      attemptsMade,
      addedAt,
      ...(scheduledFor === undefined ? {} : { scheduledFor }),
    };
    const done = (async () => {
      try {
        this.settle(entry, await processor(job, controller.signal));
      } catch (error) {
        this.fail(entry, error, controller.signal.aborted);
      } finally {
        this.running.delete(entry);
        this.pump();
      }
    })();
    this.running.set(entry, { controller, done });
  }

  private settle(entry: Entry<T>, result: ProcessorResult<T>): void {
    if (result === undefined) return this.finish(entry, this.keepCompletedMs, 'completed');
    if ('again' in result) {
      entry.data = result.again.data;
      return this.delay(entry, result.again.delayMs);
    }
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + result.rateLimited.waitMs);
    this.enqueue(entry, true);
  }

  private fail(entry: Entry<T>, error: unknown, aborted: boolean): void {
    // Aborted by close: handed back like a crashed try, so it neither counts nor can be lost.
    if (aborted) return this.enqueue(entry, true);
    const { attempts = 1, backoffMs = 0 } = entry.options;
    if (++entry.attemptsMade < attempts) return this.delay(entry, backoffMs * 2 ** (entry.attemptsMade - 1));
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(`queue ${this.name}: job ${entry.id} (${entry.name}) failed for good: ${reason}`);
    this.finish(entry, this.keepFailedMs, 'failed');
  }

  private finish(entry: Entry<T>, keepMs: number, how: 'completed' | 'failed'): void {
    entry.state = 'finished';
    entry.keptUntil = this.now() + keepMs;
    const kept = this.kept[how];
    const drop = (old: Entry<T>) => {
      kept.delete(old);
      if (this.jobs.get(old.id) === old) this.jobs.delete(old.id);
    };
    if (keepMs <= 0) return drop(entry);
    // Only its id is kept: what it carried (a Slack request's payload) is let go now.
    entry.data = undefined as T;
    kept.add(entry);
    // Oldest first, and kept alike, so they go in order: those past their time, then the most over the count.
    // An add after keptUntil replaces the entry at once; this only frees the memory, with no timer each.
    const most = how === 'completed' ? COMPLETED_KEPT_COUNT : FAILED_KEPT_COUNT;
    const now = this.now();
    for (const old of kept) {
      if (kept.size <= most && (old.keptUntil ?? 0) > now) break;
      drop(old);
    }
  }
}

/** The queue port in this process only: what it holds is gone with the process. */
export function openMemoryQueues(options: { logger: Logger; now?: () => number }): Queues {
  const now = options.now ?? Date.now;
  const opened = new Map<string, MemoryQueue<unknown>>();
  let closing: Promise<void> | undefined;

  const closeAll = async (graceMs: number): Promise<void> => {
    const settled = await Promise.all([...opened.values()].map((queue) => queue.shutDown(graceMs)));
    for (const queue of opened.values()) queue.closeForAdds();
    if (settled.includes(false))
      options.logger.warn('Queues closed while a processor ignored its abort signal');
  };

  return {
    kind: 'memory',
    queue<T>(name: string, queueOptions: QueueOptions = {}): WorkQueue<T> {
      let queue = opened.get(name);
      if (!queue) {
        if (closing) throw new Error('the queues are closed');
        queue = new MemoryQueue<unknown>(
          name,
          queueOptions.keepCompletedMs ?? 0,
          queueOptions.keepFailedMs ?? FAILED_KEPT_MS,
          options.logger,
          now,
        );
        opened.set(name, queue);
      }
      return queue as unknown as WorkQueue<T>;
    },
    close(graceMs: number): Promise<void> {
      closing ??= closeAll(graceMs);
      return closing;
    },
  };
}
