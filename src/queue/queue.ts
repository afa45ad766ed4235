/**
 * The queue port: the seam between the web role (listeners that verify, ack and enqueue) and the
 * worker role (processors). BullMQ implements it on Redis (`bullmqQueues.ts`); an in-process queue
 * implements it without Redis (`memoryQueues.ts`). Both pass the same contract tests
 * (test/queue/queue.contract.test.ts). The words are BullMQ's: queue, job, worker, processor.
 */

/** One job as its processor sees it. */
/** How long a withdrawal's mark lasts: longer than any wait of its job in the queue. */
export const WITHDRAWN_KEPT_MS = 24 * 3_600_000;

export interface QueueJob<T> {
  /** The job id: the one given to `add`, or one the queue made up. */
  readonly id: string;
  readonly name: string;
  readonly data: T;
  /**
   * Failed tries before this one (0 on the first). A try cut short by a crash, or aborted by close,
   * does not count.
   */
  readonly attemptsMade: number;
  /** When the job was first added (ms since the epoch). */
  readonly addedAt: number;
  /** For a job a scheduler added: the occurrence it stands for (it may run later, if no worker was up). */
  readonly scheduledFor?: number;
}

/** What a processor may ask for instead of completing its job. */
export type ProcessorResult<T> =
  | undefined
  /** Keep this job (same id, so still the only one with it) and run it again after `delayMs`, with `data`. */
  | { again: { delayMs: number; data: T } }
  /**
   * The remote service said "slow down": this job goes back to wait, and no job of this queue
   * starts for `waitMs`, in any process.
   */
  | { rateLimited: { waitMs: number } };

/**
 * A job's work. `signal` is aborted when the worker is closing and the running job should stop
 * waiting (a retry wait, a rate-limit wait): it then throws, and the job is tried again later
 * (by this or another process) if it has attempts left. A throw after that abort gives the job back
 * without counting as a failed try, so it always has.
 */
export type Processor<T> = (job: QueueJob<T>, signal: AbortSignal) => Promise<ProcessorResult<T>>;

export interface AddOptions {
  /**
   * One job with this id at a time, in the whole deployment: an add while a job with this id
   * waits, is delayed or runs is ignored (and resolves false). Once that job completes, the id
   * may be used again, unless the queue keeps completed jobs (`keepCompletedMs`). A job that failed
   * for good holds its id for as long as it is kept (a day).
   */
  jobId?: string;
  delayMs?: number;
  /** Tries in all (default 1). A failed try is retried after `backoffMs`, doubling each time. */
  attempts?: number;
  backoffMs?: number;
}

export interface Submission {
  /** The job's `addedAt`, distinct for every add of this process. */
  readonly stamp: number;
  /** Resolves once the queue holds the job; rejects when the add failed. */
  readonly queued: Promise<void>;
  /**
   * Whether the queue may hold the job although `queued` rejected: the add was sent, and its
   * answer lost with the connection. False when it was never sent, or refused.
   */
  readonly mayHaveLanded: boolean;
  /**
   * Gives the add up: one still waiting to be sent (a queue set up again waits for Redis) never is,
   * and `queued` rejects. One sent already may still land: `withdraw` it.
   */
  abandon(): void;
}

export interface WorkerOptions {
  /** Jobs this process runs at once. */
  concurrency: number;
  /** At most `max` jobs start per `durationMs`, counted across every process working this queue. */
  limiter?: { max: number; durationMs: number };
}

export interface QueueOptions {
  /**
   * How long a completed job (and so its id) is kept: an add with that id is ignored meanwhile.
   * 0 (the default): removed at once. Failed jobs are kept a day for the operator, then removed.
   * At least that long: on Redis, BullMQ removes it (in whole seconds) when a later job of the queue
   * completes.
   */
  keepCompletedMs?: number;
  /** How long a job that failed for good (and so its id) is kept. Default a day. */
  keepFailedMs?: number;
}

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
}

export interface WorkQueue<T> {
  readonly name: string;
  /** Adds a job; false when a job with the same `jobId` is already there (nothing was added). */
  add(name: string, data: T, options?: AddOptions): Promise<boolean>;
  /**
   * Adds a job with `options.jobId` in one round trip fewer than `add`: it does not find out
   * whether a job with that id was there already (then nothing was added). `queued` resolves once
   * the queue holds the job (this one or the earlier); `stamp` names this submission's job (its
   * `addedAt`) for `withdraw` and `remove`.
   */
  submit(name: string, data: T, options: AddOptions & { jobId: string }): Submission;
  /**
   * Removes a job that has not started yet; false when it runs already, or is not there. Given
   * `stamp` (a submission's), only the job that submission added is removed.
   */
  remove(jobId: string, stamp?: number): Promise<boolean>;
  /**
   * Marks a submission's job as withdrawn, whenever its add lands (call it as soon as the add is
   * given up on: it is sent behind the add, so a job that starts finds the mark). Its processor
   * asks `withdrawn` and does nothing; `remove` takes it off the queue once it has landed.
   * Without `stamp`, every add of `jobId` is withdrawn, whichever process made it. A mark lasts
   * `WITHDRAWN_KEPT_MS`.
   */
  withdraw(jobId: string, stamp?: number): Promise<void>;
  /** True when `job` is a submission's job that was withdrawn, or every add of its id was. */
  withdrawn(job: QueueJob<T>): Promise<boolean>;
  /** Starts this process's worker on the queue (the worker role). Call once per queue. */
  process(processor: Processor<T>, options: WorkerOptions): void;
  /**
   * Adds (or updates) a job scheduler: a job `job.name` on every occurrence of the cron `pattern`
   * in `timezone`, added once per occurrence however many processes schedule it.
   */
  schedule(
    schedulerId: string,
    repeat: { pattern: string; timezone: string },
    job: { name: string; data: T; attempts?: number; backoffMs?: number },
  ): Promise<void>;
  /** Removes a job scheduler: true when there was one, false (and nothing done) when there was none. */
  unschedule(schedulerId: string): Promise<boolean>;
  counts(): Promise<JobCounts>;
}

/** Every queue of one process, on one connection (Redis) or in memory. */
export interface Queues {
  readonly kind: 'redis' | 'memory';
  queue<T>(name: string, options?: QueueOptions): WorkQueue<T>;
  /**
   * Closes the workers first: no new job starts; running jobs get until `graceMs` to finish, then
   * their signal is aborted and they are given back to the queue (a later try, here or elsewhere).
   * Until then every queue still takes adds, so work that ends meanwhile hands on what follows it
   * (a job's check, its preview). Then closes the queues. Resolves once everything is closed.
   */
  close(graceMs: number): Promise<void>;
}
