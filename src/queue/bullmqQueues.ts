import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import {
  createNodeRedisClient,
  DelayedError,
  type IRedisClient,
  type Job,
  type JobsOptions,
  Queue,
  type RepeatStrategy,
  WaitingError,
  Worker,
} from 'bullmq';
import { errorReporter, mayHaveLanded, quietBullmqEvictionWarning } from './bullmqErrors.js';
import { nextCronRun } from './cron.js';
import { redisRefusalOf } from '../store/storeErrors.js';
import type {
  AddOptions,
  JobCounts,
  Processor,
  ProcessorResult,
  QueueJob,
  QueueOptions,
  Queues,
  Submission,
  WorkerOptions,
  WorkQueue,
} from './queue.js';
import { WITHDRAWN_KEPT_MS } from './queue.js';

/** Failed jobs stay this long for the operator (and hold their id meanwhile). */
const FAILED_KEPT_SECONDS = 24 * 60 * 60;
/**
 * At most this many finished jobs are kept per queue, whatever their age: enough for the requests
 * queue's 10 minutes at Slack's pace (it caps a workspace's events near 8 a second).
 */
const COMPLETED_KEPT_COUNT = 5_000;
const FAILED_KEPT_COUNT = 1_000;
/** Entries of each queue's event stream (about; BullMQ's default is 10,000). */
const EVENTS_KEPT = 1_000;
/** The mark of an id all of whose adds are withdrawn (a stamp is a number). */
const EVERY_ADD = '*';
/** How long close waits past its grace for processors that ignore their abort signal. */
const CLOSE_OVERRUN_MS = 1_000;
/**
 * BullMQ honours a manual rate limit (`Queue.rateLimit`) only in workers that have a limiter, so a
 * queue without one gets a limiter that never limits by itself.
 */
const UNLIMITED = { max: Number.MAX_SAFE_INTEGER, duration: 1_000 };
/** How long after a Queue or Worker whose setup failed it is made again: doubling up to the most. */
const SET_UP_AGAIN_MS = 2_000;
const SET_UP_AGAIN_MOST_MS = 30_000;
/** How long the workers get to open their Redis connections before the log says they could not. */
const WORKERS_READY_WITHIN_MS = 15_000;
/**
 * A scheduler's next run as croner reads its pattern, as everything else in the bot does (see
 * cron.ts). BullMQ asks it in the queue (`upsertJobScheduler`) and in the worker (each run's next).
 */
const cronerRepeats: { repeatStrategy: RepeatStrategy } = {
  repeatStrategy: (millis, { pattern, tz }) =>
    pattern ? nextCronRun(pattern, tz, new Date(millis))?.getTime() : undefined,
};
/** The last job timestamp this process gave: each add gets a later one. */
let lastTimestamp = 0;

/**
 * The queue port on BullMQ. Queues use the caller's node-redis client (which stays the caller's:
 * closing the queues never quits it). Workers share one duplicate of it, which close quits, and
 * each duplicates that again for its blocking connection (BullMQ's own to close).
 */
export function openBullmqQueues(options: {
  client: RedisClientType;
  prefix: string;
  logger: Logger;
  /** How long a running job stays locked to its worker (renewed at half of it while the worker lives). Default 30 s. */
  lockMs?: number;
  /** How long the workers get to connect before the log says which could not (default 15 s). */
  workersReadyWithinMs?: number;
  /** How long after a Queue or Worker whose setup failed it is first made again (default 2 s; doubling after). */
  setUpAgainMs?: number;
  /** Hears every error of a Queue's or a Worker's (see readOnlyWatch.ts). */
  onError?: (error: unknown) => void;
}): Queues {
  const { prefix, logger } = options;
  quietBullmqEvictionWarning();
  const lockMs = options.lockMs ?? 30_000;
  const reportError = errorReporter(logger, undefined, options.onError);
  // One adapter for every Queue. Given the raw client, BullMQ would wrap it once per instance and
  // never take the wrapper's listeners off it again; after close such a wrapper rethrows the
  // client's next 'error' event into node-redis (an uncaught exception).
  const connection = createNodeRedisClient(options.client);
  // The client's owner reports its connection errors; Queues and Workers report theirs below.
  connection.on('error', () => {});
  // Workers must not fail a command at once while Redis is away (`disableOfflineQueue`, as the
  // bot's client does): their fetch loop then retries without ever waiting on a timer or a socket,
  // which starves the event loop (100 % CPU, no reconnect) for good. With the offline queue on,
  // their commands wait for Redis instead, and a running job's `again` lands once it is back.
  let workerClient: RedisClientType | undefined;
  let workerConnection: IRedisClient | undefined;
  const connectWorkers = (): IRedisClient => {
    if (!workerConnection) {
      // Its commands have no deadline: a worker's blocking wait for its next job lasts seconds by design,
      // and a job's step (its `again`, its completion) waits for a Redis that hangs rather than being lost.
      workerClient = options.client.duplicate({ disableOfflineQueue: false });
      workerClient.on('error', () => {}); // reported through the Workers' 'error' events
      workerConnection = createNodeRedisClient(workerClient); // connects it
      workerConnection.on('error', () => {});
      // Each Worker duplicates it once, for its blocking connection, wrapped by BullMQ.
      const duplicate = workerConnection.duplicate.bind(workerConnection);
      workerConnection.duplicate = (...args: unknown[]): IRedisClient => {
        const made = duplicate(...args);
        made.on('error', () => {}); // reported through the Workers' 'error' events while they last
        duplicatesMade?.push(made);
        return made;
      };
    }
    return workerConnection;
  };
  /** Where the connections BullMQ duplicates go while a Worker is being made (see makeWorker). */
  let duplicatesMade: IRedisClient[] | undefined;

  // The jobs this process's workers hold, from their start until Redis has their end (BullMQ's
  // completion, or the processor's own move): a close need not wait on a Redis that is away for none.
  const heldJobs = new Set<string>();
  const opened = new Map<string, WorkQueue<unknown>>();
  const queues: Queue[] = [];
  const workers: Worker[] = [];
  // Workers made again (their set-up failed) while they may still run a job their first connection
  // took: closed, and until they are, the stop gives their job its grace and cuts it at the end.
  const retiring = new Set<Worker>();
  let closing: Promise<void> | undefined;
  // Set once the workers are closed: work running until then can still add.
  let addsClosed = false;
  // Each Worker needs a blocking connection of its own: a Redis that refuses more clients leaves
  // some queues without a worker while the others run, which the log must say plainly.
  const unready = new Set<string>();
  let readyCheck: NodeJS.Timeout | undefined;
  let saidUnready = false;
  const readyWithinMs = options.workersReadyWithinMs ?? WORKERS_READY_WITHIN_MS;
  const setUpAgainMs = options.setUpAgainMs ?? SET_UP_AGAIN_MS;
  const watchReady = (name: string, worker: Worker) => {
    unready.add(name);
    worker.once('ready', () => {
      unready.delete(name);
      if (saidUnready && unready.size === 0) logger.info('every queue worker is connected to Redis now');
    });
    readyCheck ??= setTimeout(() => {
      readyCheck = undefined; // a worker made again later gets a check of its own
      if (unready.size === 0 || closing) return;
      saidUnready = true;
      logger.error(
        `the workers of the queues ${[...unready].join(', ')} could not connect to Redis within ` +
          `${Math.round(readyWithinMs / 1000)} s, so their work waits. ` +
          `Redis may refuse more clients (its maxclients, or the plan's connection limit): a process with ` +
          `the worker role opens ${2 + workers.length} connections, one with only the web role 1`,
      );
    }, readyWithinMs);
    readyCheck.unref();
  };

  /**
   * BullMQ sets a Queue or a Worker up once, on its connection's first answers: a Redis that drops
   * the connection at that moment (a restart or a failover as the bot starts) leaves it broken for
   * good, its adds failing or its worker idle. Such a one is closed and made again, every few
   * seconds, until one is set up.
   */
  function setUpAgainIfBroken<B extends Queue | Worker>(
    what: string,
    current: B,
    make: () => B,
    replace: (next: B) => void,
    tries = 0,
  ): void {
    current.waitUntilReady().then(
      () => {
        if (tries > 0) logger.info(`${what} is set up on Redis now`);
      },
      (error: unknown) => {
        if (closing) return;
        const waitMs = Math.min(setUpAgainMs * 2 ** tries, SET_UP_AGAIN_MOST_MS);
        // Said once per streak: it is tried again until Redis answers, however long that takes.
        if (tries === 0) {
          logger.warn(
            `${what} could not be set up on Redis (${error instanceof Error ? error.message : String(error)}); it is set up again until Redis answers`,
          );
        }
        void current.close().catch(() => {});
        setTimeout(() => {
          if (closing) return;
          const next = make();
          replace(next);
          setUpAgainIfBroken(what, next, make, replace, tries + 1);
        }, waitMs).unref();
      },
    );
  }

  function openQueue<T>(name: string, queueOptions: QueueOptions = {}): WorkQueue<T> {
    const keepCompletedMs = queueOptions.keepCompletedMs ?? 0;
    const keepFailedMs = queueOptions.keepFailedMs ?? FAILED_KEPT_SECONDS * 1000;
    const makeQueue = () => {
      const made = new Queue<T, unknown, string, T, unknown, string>(name, {
        connection,
        prefix,
        settings: cronerRepeats,
        // Nothing here reads BullMQ's event stream: a short one keeps a small Redis plan small.
        streams: { events: { maxLen: EVENTS_KEPT } },
        defaultJobOptions: {
          // BullMQ counts in seconds and drops aged completed jobs when a later job completes.
          // Bounded by count too: a small Redis plan must not fill up with finished work.
          removeOnComplete:
            keepCompletedMs > 0
              ? { age: Math.ceil(keepCompletedMs / 1000), count: COMPLETED_KEPT_COUNT }
              : true,
          removeOnFail:
            keepFailedMs > 0 ? { age: Math.ceil(keepFailedMs / 1000), count: FAILED_KEPT_COUNT } : true,
        },
      });
      made.on('error', (error) => reportError(`queue ${name}`, error));
      return made;
    };
    let queue = makeQueue();
    queues.push(queue as Queue);
    setUpAgainIfBroken(`queue ${name}`, queue, makeQueue, (next) => {
      queues[queues.indexOf(queue as Queue)] = next as Queue;
      queue = next;
    });
    let processing = false;

    const run = async (
      processor: Processor<T>,
      worker: Worker<T, unknown, string>,
      job: Job<T, unknown, string>,
      token: string | undefined,
      signal: AbortSignal,
      /** Its end is on Redis: no completion by BullMQ follows. */
      landed: () => void,
    ): Promise<void> => {
      // What the job carries now, before its processor could change it in place.
      const data = JSON.stringify(job.data);
      let result: ProcessorResult<T>;
      try {
        result = await processor(jobView(job), signal);
      } catch (error) {
        if (!signal.aborted) throw error;
        // Aborted by close: handed back like a crashed try, so it neither counts nor can be lost.
        await onceMore(() => job.moveToWait(token));
        landed();
        throw new WaitingError();
      }
      if (result === undefined) return;
      if ('again' in result) {
        // Its data first: writing it again is harmless, so a lost answer is simply sent again (a move
        // sent again after a lost answer fails, and data written after it would then be lost).
        // A job run again as it was (a job followed at its cadence) is not written again.
        if (JSON.stringify(result.again.data) !== data)
          await whileRefused(() => job.updateData(result.again.data), signal);
        await whileRefused(() => job.moveToDelayed(Date.now() + result.again.delayMs, token), signal);
        landed();
        throw new DelayedError();
      }
      // On the Worker's connection: deprecated for Queue.rateLimit, which would fail while Redis is away.
      await onceMore(() => worker.rateLimit(Math.max(1, result.rateLimited.waitMs)));
      landed();
      throw Worker.RateLimitError();
    };

    const withdrawnKey = (jobId: string) => `${prefix}:withdrawn:${name}:${jobId}`;
    /** Adds the job with a timestamp distinct within this process: the stored one tells two adds of one id apart. */
    const put = (jobName: string, data: T, addOptions: AddOptions) => {
      lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
      const stamp = lastTimestamp;
      // Whether the add itself went out: a queue whose setup failed refuses every add at once.
      const state = { sent: false, abandoned: false };
      const adding: Promise<Job<T, unknown, string>> = addsClosed
        ? Promise.reject(new Error(`queue ${name} is closed`))
        : queue.waitUntilReady().then(() => {
            if (state.abandoned) throw new Error(`an add to queue ${name} was given up before it was sent`);
            state.sent = true;
            return queue.add(jobName, data, {
              timestamp: stamp,
              jobId: addOptions.jobId,
              delay: addOptions.delayMs,
              ...retryOptions(addOptions),
            });
          });
      // A Queue emits no 'error' for an add Redis refused: a process with the web role alone writes little else.
      adding.catch((error: unknown) => options.onError?.(error));
      return { stamp, adding, state };
    };

    return {
      name,
      async add(jobName: string, data: T, addOptions: AddOptions = {}): Promise<boolean> {
        const { stamp, adding } = put(jobName, data, addOptions);
        await adding;
        if (addOptions.jobId === undefined) return true;
        // BullMQ answers a taken jobId with that same id: the stored timestamp tells whose job it is
        // (none stored: the job ran and was removed in between, most likely the one this add made).
        const stored = await queue.getJob(addOptions.jobId);
        return stored === undefined || stored.timestamp === stamp;
      },
      submit(jobName: string, data: T, addOptions: AddOptions & { jobId: string }): Submission {
        const { stamp, adding, state } = put(jobName, data, addOptions);
        let landed = false;
        const queued = adding.then(
          () => undefined,
          (error: unknown) => {
            landed = state.sent && mayHaveLanded(error);
            throw error;
          },
        );
        return {
          stamp,
          queued,
          get mayHaveLanded() {
            return landed;
          },
          abandon: () => void (state.abandoned = true),
        };
      },
      async withdraw(jobId: string, stamp?: number): Promise<void> {
        // On the queue's connection, behind the add: Redis stores the mark right after the job.
        await options.client.set(withdrawnKey(jobId), stamp === undefined ? EVERY_ADD : String(stamp), {
          PX: WITHDRAWN_KEPT_MS,
        });
      },
      async withdrawn(job: QueueJob<T>): Promise<boolean> {
        const mark = await options.client.get(withdrawnKey(job.id));
        return mark === EVERY_ADD || mark === String(job.addedAt);
      },
      async remove(jobId: string, stamp?: number): Promise<boolean> {
        const job = await queue.getJob(jobId);
        if (!job || (stamp !== undefined && job.timestamp !== stamp)) return false;
        const state = await job.getState();
        if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return false;
        // BullMQ refuses (1 → 0) to remove a job a worker has locked meanwhile.
        return (await queue.remove(jobId)) === 1;
      },
      process(processor: Processor<T>, workerOptions: WorkerOptions): void {
        if (closing) throw new Error(`queue ${name} is closed`);
        if (processing) throw new Error(`queue ${name} already has a worker in this process`);
        processing = true;
        const limiter = workerOptions.limiter;
        const makeWorker = () => {
          const own: IRedisClient[] = [];
          duplicatesMade = own;
          const worker: Worker<T, unknown, string> = new Worker<T, unknown, string>(
            name,
            // Three parameters: BullMQ passes the abort signal only to processors that take it.
            (job, token, signal) => {
              const held = `${name}:${job.id}`;
              heldJobs.add(held);
              const landed = () => heldJobs.delete(held);
              return run(processor, worker, job, token, signal ?? new AbortController().signal, landed);
            },
            {
              connection: connectWorkers(),
              prefix,
              settings: cronerRepeats,
              concurrency: workerOptions.concurrency,
              limiter: limiter ? { max: limiter.max, duration: limiter.durationMs } : UNLIMITED,
              // A crashed process's job goes back to wait at the first stalled check that finds it
              // marked by the check before and its lock gone. Checking every half lock, another process
              // took such a job over after 1.5 locks when tried (45 s of a 30 s lock; 90 s with BullMQ's
              // default 30 s check).
              lockDuration: lockMs,
              stalledInterval: Math.max(500, Math.round(lockMs / 2)),
              // A try cut short by a crash does not count, but a job that keeps taking its process down
              // must stop somewhere. BullMQ never resets the count, so a job run `again` for hours
              // collects its stalls over all its runs: 1 (the default) would fail it at its second.
              maxStalledCount: 3,
            },
          );
          duplicatesMade = undefined;
          // A Worker whose blocking wait failed opens that connection again, which its close, begun
          // meanwhile, had already ended: with Redis refusing clients (its maxclients reached) it then
          // tries for good, its listener gone, and its next refusal is an uncaught exception. Once
          // the Worker closes, its connections are not opened again.
          const close = worker.close.bind(worker);
          worker.close = (force?: boolean) => {
            for (const made of own) made.connect = () => Promise.resolve();
            return close(force);
          };
          worker.on('error', (error) => reportError(`worker ${name}`, error));
          worker.on('completed', (job) => heldJobs.delete(`${name}:${job.id}`));
          worker.on('failed', (job) => job && heldJobs.delete(`${name}:${job.id}`));
          watchReady(name, worker as Worker);
          worker.on('failed', (job, error) => {
            // Failed for good: its tries are spent, or it stalled too often (BullMQ then fails it
            // whatever tries it had left, and removes it).
            const stalledOut =
              error.name === 'UnrecoverableError' || /stalled more than/i.test(error.message);
            if (job && (stalledOut || job.attemptsMade >= (job.opts.attempts ?? 1))) {
              logger.warn(`queue ${name}: job ${job.id} (${job.name}) failed for good: ${error.message}`);
            }
          });
          return worker;
        };
        let current = makeWorker();
        workers.push(current as Worker);
        setUpAgainIfBroken(`the worker of queue ${name}`, current, makeWorker, (next) => {
          const retired = current as Worker;
          retiring.add(retired);
          const closed = () => retiring.delete(retired);
          void retired.close().then(closed, closed);
          workers[workers.indexOf(retired)] = next as Worker;
          current = next;
        });
      },
      async schedule(schedulerId, repeat, job): Promise<void> {
        await queue.upsertJobScheduler(
          schedulerId,
          { pattern: repeat.pattern, tz: repeat.timezone },
          { name: job.name, data: job.data, opts: retryOptions(job) },
        );
      },
      async unschedule(schedulerId: string): Promise<boolean> {
        return queue.removeJobScheduler(schedulerId);
      },
      async counts(): Promise<JobCounts> {
        // BullMQ 6 keeps a paused queue's jobs in 'wait': it has no 'paused' list any more.
        const counts = await queue.getJobCounts(
          'wait',
          'prioritized',
          'waiting-children',
          'active',
          'delayed',
        );
        const count = (type: string) => counts[type] ?? 0;
        return {
          waiting: count('wait') + count('prioritized') + count('waiting-children'),
          active: count('active'),
          delayed: count('delayed'),
        };
      },
    };
  }

  async function closeAll(graceMs: number): Promise<void> {
    clearTimeout(readyCheck);
    // With Redis away and no job running, the workers' close would wait for their loops' commands,
    // held for Redis, until the forced exit, with nothing to hand back: their connection is cut
    // (which ends those commands) and their close is not waited for. Looked at as the close begins,
    // and whenever that connection fails meanwhile. A running job keeps its grace.
    const idleAndAway = () => heldJobs.size === 0 && workerClient?.isOpen === true && !workerClient.isReady;
    const closingWorkers = [...workers, ...retiring];
    const workersClosed = Promise.allSettled(closingWorkers.map((worker) => worker.close(idleAndAway())));
    let cut = () => {};
    const cutOff = new Promise<false>((resolve) => (cut = () => resolve(false)));
    const cutIfIdleAndAway = () => {
      if (!idleAndAway()) return;
      workerClient?.destroy();
      cut();
    };
    cutIfIdleAndAway();
    workerClient?.on('error', cutIfIdleAndAway);
    const timers: NodeJS.Timeout[] = [];
    const overran = await Promise.race([
      workersClosed.then(() => false),
      cutOff,
      new Promise<boolean>((resolve) => {
        timers.push(
          setTimeout(() => {
            for (const worker of closingWorkers) worker.cancelAllJobs('the worker is closing');
          }, graceMs),
          setTimeout(() => resolve(true), graceMs + CLOSE_OVERRUN_MS),
        );
      }),
    ]);
    workerClient?.off('error', cutIfIdleAndAway);
    for (const timer of timers) clearTimeout(timer);
    if (overran) {
      logger.warn(
        'Queues closed before their workers did (a processor ignored its abort signal, or Redis is away): ' +
          'a job still held goes back to the queue once its lock expires',
      );
    }
    addsClosed = true;
    await Promise.allSettled(queues.map((queue) => queue.close()));
    // After an overrun a processor still holds its job: cutting it off leaves the job to stall.
    if (workerClient?.isReady && !overran) await workerClient.close();
    else if (workerClient?.isOpen) workerClient.destroy();
  }

  return {
    kind: 'redis',
    queue<T>(name: string, queueOptions?: QueueOptions): WorkQueue<T> {
      const existing = opened.get(name);
      if (existing) return existing as WorkQueue<T>;
      const workQueue = openQueue<T>(name, queueOptions);
      opened.set(name, workQueue as WorkQueue<unknown>);
      return workQueue;
    },
    close(graceMs: number): Promise<void> {
      closing ??= closeAll(graceMs);
      return closing;
    },
  };
}

/**
 * A step whose reply went down with the connection is sent once more: the Worker's offline queue
 * holds it until Redis is back. (Had it landed after all, the second try fails, with the job
 * already where the step put it.) Left to fail, BullMQ would count it as a failed try of the job.
 */
async function onceMore(step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch {
    await step();
  }
}

/** How often a job's step that a full Redis refused (OOM, READONLY…) is sent again, at the most. */
const REFUSED_STEP_AGAIN_MS = 1_000;

/**
 * A job's `again` step, sent again (as by `onceMore`) while Redis refuses it for now (full, a
 * replica in a failover): failed instead, the job would fail for good, and a followed job go
 * unchecked until the next reconciliation. A Redis away holds BullMQ's commands already. Given up
 * when the worker closes: the job is then on Redis as a running one, and taken up again once its
 * lock lapses.
 */
async function whileRefused(step: () => Promise<unknown>, signal: AbortSignal): Promise<void> {
  for (;;) {
    try {
      await onceMore(step);
      return;
    } catch (error) {
      if (redisRefusalOf(error) === undefined || signal.aborted) throw error;
      await sleep(REFUSED_STEP_AGAIN_MS, undefined, { signal }).catch(() => {});
    }
  }
}

function jobView<T>(job: Job<T>): QueueJob<T> {
  return {
    id: job.id ?? '',
    name: job.name,
    data: job.data,
    attemptsMade: job.attemptsMade,
    addedAt: job.timestamp,
    // A scheduler's job carries the occurrence it was made for.
    ...(job.repeatJobKey && job.opts.prevMillis !== undefined ? { scheduledFor: job.opts.prevMillis } : {}),
  };
}

function retryOptions(options: { attempts?: number; backoffMs?: number }): JobsOptions {
  return {
    attempts: options.attempts ?? 1,
    ...(options.backoffMs === undefined
      ? {}
      : { backoff: { type: 'exponential', delay: options.backoffMs } }),
  };
}
