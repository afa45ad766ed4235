import { createClient, type RedisClientType } from '@keyv/redis';
import { createNodeRedisClient, Job, Queue, Worker } from 'bullmq';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openBullmqQueues } from '../../src/queue/bullmqQueues.js';
import { nextCronRun } from '../../src/queue/cron.js';
import { openMemoryQueues } from '../../src/queue/memoryQueues.js';
import type { Processor, ProcessorResult, QueueJob, Queues, WorkQueue } from '../../src/queue/queue.js';
import { WITHDRAWN_KEPT_MS } from '../../src/queue/queue.js';
import { recordingLogger } from '../support/loggers.js';
import { startMuteProxy } from '../support/muteProxy.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { uniqueNamespace } from '../support/redis.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Slack between the test's clock and the queue's (Redis keeps its own time for delays and limits). */
const CLOCK_SLACK_MS = 30;

interface Opened {
  queues: Queues;
  /** False once the queues quit a connection that is not theirs. */
  connectionOpen(): boolean;
}

interface Harness {
  /** Every Queues opened by a shared harness sees the same jobs, as processes on one Redis do. */
  readonly shared: boolean;
  open(): Promise<Opened>;
  cleanup(): Promise<void>;
}

const { logger, lines: logLines } = recordingLogger();

function memoryHarness(): Harness {
  return {
    shared: false,
    open: async () => ({ queues: openMemoryQueues({ logger }), connectionOpen: () => true }),
    cleanup: async () => {},
  };
}

function bullmqHarness(): Harness {
  const prefix = uniqueNamespace('queue');
  const clients: RedisClientType[] = [];
  const connect = async () => {
    // The bot's own client settings that matter to BullMQ: commands fail at once while Redis is away.
    const client = createClient({ url: REDIS_URL, disableOfflineQueue: true }) as RedisClientType;
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  return {
    shared: true,
    open: async () => {
      const client = await connect();
      return { queues: openBullmqQueues({ client, prefix, logger }), connectionOpen: () => client.isReady };
    },
    cleanup: async () => {
      const client = await connect();
      const keys: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 }))
        keys.push(...batch);
      if (keys.length > 0) await client.del(keys);
      for (const open of clients) if (open.isOpen) await open.quit();
    },
  };
}

interface Run<T> {
  job: QueueJob<T>;
  at: number;
}

/** A processor that records its runs and hands each to `then`. */
function recorder<T>(
  then: (job: QueueJob<T>, signal: AbortSignal) => Promise<ProcessorResult<T> | void> = async () => {},
) {
  const runs: Run<T>[] = [];
  let running = 0;
  let mostRunning = 0;
  const processor: Processor<T> = async (job, signal) => {
    runs.push({ job, at: Date.now() });
    mostRunning = Math.max(mostRunning, ++running);
    try {
      return (await then(job, signal)) || undefined;
    } finally {
      running--;
    }
  };
  return {
    runs,
    processor,
    running: () => running,
    mostRunning: () => mostRunning,
  };
}

/** Processes the queue's jobs, noting of each its data and whether it was withdrawn. */
function processWithdrawnMarks(queue: WorkQueue<string>): Array<[string, boolean]> {
  const marks: Array<[string, boolean]> = [];
  queue.process(
    async (job) => {
      marks.push([job.data, await queue.withdrawn(job)]);
      return undefined;
    },
    { concurrency: 1 },
  );
  return marks;
}

/** A promise the test settles by hand. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe.each([
  { kind: 'memory', harness: memoryHarness },
  { kind: 'bullmq', harness: bullmqHarness },
])('the queue port on $kind', ({ harness: makeHarness }) => {
  const harness = makeHarness();
  const opened: Queues[] = [];
  let queueCount = 0;
  const nextName = () => `q${++queueCount}`;
  const open = async () => {
    const result = await harness.open();
    opened.push(result.queues);
    return result;
  };
  const idle = { waiting: 0, active: 0, delayed: 0 };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((queues) => queues.close(0)));
  });
  afterAll(() => harness.cleanup());

  it('runs a job once, as it was added', async () => {
    const { queues } = await open();
    const queue = queues.queue<{ n: number }>(nextName());
    const worked = recorder<{ n: number }>();
    queue.process(worked.processor, { concurrency: 2 });

    const before = Date.now();
    await expect(queue.add('greet', { n: 1 }, { jobId: 'greet-1' })).resolves.toBe(true);
    await expect(queue.add('greet', { n: 2 })).resolves.toBe(true);
    const after = Date.now();
    await expect.poll(() => worked.runs.length).toBe(2);
    await expect.poll(() => queue.counts()).toEqual(idle);

    const first = worked.runs.find((run) => run.job.id === 'greet-1')?.job;
    expect(first).toMatchObject({ name: 'greet', data: { n: 1 }, attemptsMade: 0 });
    expect(first?.addedAt).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
    expect(first?.addedAt).toBeLessThanOrEqual(after + CLOCK_SLACK_MS);
    const second = worked.runs.find((run) => run.job.id !== 'greet-1')?.job;
    expect(second).toMatchObject({ name: 'greet', data: { n: 2 } });
    expect(second?.id).toEqual(expect.any(String));
    expect(worked.runs).toHaveLength(2);
  });

  it('ignores an add while a job with that id waits, is delayed or runs, and takes the id again once done', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());

    await expect(queue.add('job', 'first', { jobId: 'a' })).resolves.toBe(true);
    await expect(queue.add('job', 'second', { jobId: 'a' })).resolves.toBe(false);
    await expect(queue.add('job', 'later', { jobId: 'b', delayMs: 60_000 })).resolves.toBe(true);
    await expect(queue.add('job', 'now', { jobId: 'b' })).resolves.toBe(false);
    const racing = await Promise.all([1, 2, 3].map((n) => queue.add('job', `racer ${n}`, { jobId: 'race' })));
    expect(racing.filter(Boolean)).toHaveLength(1);
    await expect(queue.counts()).resolves.toEqual({ waiting: 2, active: 0, delayed: 1 });

    const release = gate();
    const worked = recorder<string>(() => release.opened);
    queue.process(worked.processor, { concurrency: 1 });
    await expect.poll(() => worked.runs.length).toBe(1);
    await expect(queue.add('job', 'third', { jobId: 'a' })).resolves.toBe(false);
    expect(worked.runs[0]?.job.data).toBe('first');

    release.open();
    await expect.poll(() => queue.counts()).toEqual({ waiting: 0, active: 0, delayed: 1 });
    await expect(queue.add('job', 'again', { jobId: 'a' })).resolves.toBe(true);
    await expect.poll(() => worked.runs.map((run) => run.job.data)).toEqual(['first', 'racer 1', 'again']);
  });

  it('keeps a completed job, and so its id, for keepCompletedMs', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName(), { keepCompletedMs: 60_000 });
    const worked = recorder<string>();
    queue.process(worked.processor, { concurrency: 1 });

    await expect(queue.add('job', 'first', { jobId: 'kept' })).resolves.toBe(true);
    await expect.poll(() => worked.runs.length).toBe(1);
    await expect.poll(() => queue.counts()).toEqual(idle);
    await expect(queue.add('job', 'second', { jobId: 'kept' })).resolves.toBe(false);
    await expect(queue.counts()).resolves.toEqual(idle);
  });

  it('removes a job that has not started, and not one that runs', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    await queue.add('job', 'waiting', { jobId: 'w' });
    await queue.add('job', 'delayed', { jobId: 'd', delayMs: 60_000 });
    await expect(queue.remove('w')).resolves.toBe(true);
    await expect(queue.remove('d')).resolves.toBe(true);
    await expect(queue.remove('never-added')).resolves.toBe(false);
    await expect(queue.counts()).resolves.toEqual(idle);

    const release = gate();
    const worked = recorder<string>(() => release.opened);
    queue.process(worked.processor, { concurrency: 1 });
    await queue.add('job', 'running', { jobId: 'r' });
    await expect.poll(() => worked.runs.length).toBe(1);
    await expect(queue.remove('r')).resolves.toBe(false);
    release.open();
    await expect.poll(() => queue.counts()).toEqual(idle);
    expect(worked.runs.map((run) => run.job.data)).toEqual(['running']);
    // The removed ids are free again.
    await expect(queue.add('job', 'again', { jobId: 'w' })).resolves.toBe(true);
    await expect.poll(() => worked.runs.length).toBe(2);
  });

  it('submits a job in one step; withdraws and removes only the job that submission added', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    const first = queue.submit('job', 'first', { jobId: 's' });
    await first.queued;
    // The id is taken: nothing is added, and the stamp of this submission names no job.
    const second = queue.submit('job', 'second', { jobId: 's' });
    await second.queued;
    expect(second.stamp).not.toBe(first.stamp);
    await expect(queue.remove('s', second.stamp)).resolves.toBe(false);
    await expect(queue.counts()).resolves.toEqual({ ...idle, waiting: 1 });
    await expect(queue.remove('s', first.stamp)).resolves.toBe(true);
    await expect(queue.counts()).resolves.toEqual(idle);

    // A withdrawn submission's job that runs anyway is told so; another submission's is not.
    const withdrawn = queue.submit('job', 'withdrawn', { jobId: 'w' });
    await queue.withdraw('w', withdrawn.stamp);
    await withdrawn.queued;
    const kept = queue.submit('job', 'kept', { jobId: 'x' });
    await queue.withdraw('x', kept.stamp + 1_000_000);
    await kept.queued;
    const worked = recorder<string>();
    const marks: boolean[] = [];
    queue.process(
      async (job, signal) => {
        marks.push(await queue.withdrawn(job));
        return worked.processor(job, signal);
      },
      { concurrency: 1 },
    );
    await expect.poll(() => worked.runs.length).toBe(2);
    expect(worked.runs.map((run) => run.job.data)).toEqual(['withdrawn', 'kept']);
    expect(marks).toEqual([true, false]);
  });

  it('withdraws every add of an id, made before or after, when no submission is named', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    const before = queue.submit('job', 'before', { jobId: 'every' });
    await before.queued;
    await queue.withdraw('every');
    await queue.add('job', 'other', { jobId: 'other' });
    const marks = processWithdrawnMarks(queue);
    await expect.poll(() => marks.length).toBe(2);
    // Its id free again, a later add of it (another process's late one) is withdrawn too.
    await queue.add('job', 'after', { jobId: 'every' });
    await expect.poll(() => marks.length).toBe(3);
    expect(marks).toEqual([
      ['before', true],
      ['other', false],
      ['after', true],
    ]);
  });

  it('does not run a delayed job before its delay', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    const worked = recorder<string>();
    queue.process(worked.processor, { concurrency: 1 });

    const addedAt = Date.now();
    await queue.add('job', 'late', { delayMs: 700 });
    await expect(queue.counts()).resolves.toEqual({ waiting: 0, active: 0, delayed: 1 });
    await expect.poll(() => worked.runs.length).toBe(1);
    expect(worked.runs[0]!.at - addedAt).toBeGreaterThanOrEqual(700 - CLOCK_SLACK_MS);
  });

  it('runs a job again later with new data when its processor asks, keeping its id', async () => {
    const { queues } = await open();
    const queue = queues.queue<{ round: number }>(nextName());
    const worked = recorder<{ round: number }>(async (job) =>
      job.data.round === 1 ? { again: { delayMs: 600, data: { round: 2 } } } : undefined,
    );
    queue.process(worked.processor, { concurrency: 1 });

    await queue.add('poll', { round: 1 }, { jobId: 'poll-1' });
    await expect.poll(() => queue.counts()).toEqual({ waiting: 0, active: 0, delayed: 1 });
    await expect(queue.add('poll', { round: 1 }, { jobId: 'poll-1' })).resolves.toBe(false);
    await expect.poll(() => worked.runs.length).toBe(2);
    await expect.poll(() => queue.counts()).toEqual(idle);

    const [first, second] = worked.runs.map((run) => run.job);
    expect(second).toEqual({ ...first, data: { round: 2 } });
    expect(worked.runs[1]!.at - worked.runs[0]!.at).toBeGreaterThanOrEqual(600 - CLOCK_SLACK_MS);
  });

  it('runs a job again with the data its processor hands back, left as it was or changed in place', async () => {
    const { queues } = await open();
    const queue = queues.queue<{ rounds: number[] }>(nextName());
    const seen: number[][] = [];
    queue.process(
      async (job) => {
        seen.push([...job.data.rounds]);
        if (seen.length === 1) return { again: { delayMs: 50, data: job.data } };
        if (seen.length > 2) return undefined;
        job.data.rounds.push(2);
        return { again: { delayMs: 50, data: job.data } };
      },
      { concurrency: 1 },
    );

    await queue.add('poll', { rounds: [1] }, { jobId: 'poll-1' });
    await expect.poll(() => seen.length).toBe(3);
    expect(seen).toEqual([[1], [1], [1, 2]]);
  });

  it('holds every job of the queue back while rate limited, and gives the limited job back', async () => {
    const name = nextName();
    let limitedAt: number | undefined;
    const worked = recorder<string>(async (job) => {
      if (job.data !== 'limited' || limitedAt !== undefined) return undefined;
      limitedAt = Date.now();
      return { rateLimited: { waitMs: 1_000 } };
    });
    // On Redis a second process works the same queue: the limit holds there too.
    const processes = harness.shared ? [await open(), await open()] : [await open()];
    const [queue] = processes.map(({ queues }) => queues.queue<string>(name));
    for (const { queues } of processes)
      queues.queue<string>(name).process(worked.processor, { concurrency: 2 });

    await queue!.add('job', 'limited', { jobId: 'limited' });
    await expect.poll(() => limitedAt).toBeDefined();
    await expect.poll(() => queue!.counts()).toEqual({ waiting: 1, active: 0, delayed: 0 });
    await queue!.add('job', 'other-1');
    await queue!.add('job', 'other-2');
    await expect.poll(() => worked.runs.length).toBe(4);

    const afterLimit = worked.runs.slice(1);
    for (const run of afterLimit) expect(run.at).toBeGreaterThanOrEqual(limitedAt! + 1_000 - CLOCK_SLACK_MS);
    const again = afterLimit.find((run) => run.job.id === 'limited');
    expect(again?.job.attemptsMade).toBe(0);
  });

  it('starts no more than limiter.max jobs per window, across processes', async () => {
    const name = nextName();
    const worked = recorder<number>();
    const limiter = { max: 2, durationMs: 600 };
    const processes = harness.shared ? [await open(), await open()] : [await open()];
    const [queue] = processes.map(({ queues }) => queues.queue<number>(name));
    for (const n of [1, 2, 3, 4, 5, 6]) await queue!.add('job', n);
    for (const { queues } of processes)
      queues.queue<number>(name).process(worked.processor, { concurrency: 5, limiter });
    await expect.poll(() => worked.runs.length).toBe(6);

    // A window opens with the first start after the previous one closed.
    const starts = worked.runs.map((run) => run.at).sort((a, b) => a - b);
    const windows: number[][] = [];
    for (const at of starts) {
      const current = windows.at(-1);
      // Starts are timed when the processor runs, which a loaded machine may delay after Redis
      // opened the window: a fifth of the window's length is allowed for it (an unlimited queue
      // starts all six within milliseconds, so this still fails it).
      if (current && at < current[0]! + limiter.durationMs * 0.8) current.push(at);
      else windows.push([at]);
    }
    for (const window of windows) expect(window.length).toBeLessThanOrEqual(limiter.max);
  });

  it('retries a throwing processor after a doubling backoff, until its attempts are spent', async () => {
    logLines.length = 0;
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    const worked = recorder<string>(async (job) => {
      if (job.data === 'hopeless' || job.attemptsMade < 2) throw new Error(`${job.data} failed`);
    });
    queue.process(worked.processor, { concurrency: 2 });

    await queue.add('job', 'third time lucky', { attempts: 3, backoffMs: 150 });
    await queue.add('job', 'hopeless', { jobId: 'hopeless', attempts: 2 });
    await expect.poll(() => worked.runs.length).toBe(5);
    await expect.poll(() => queue.counts()).toEqual(idle);

    const lucky = worked.runs.filter((run) => run.job.data === 'third time lucky');
    expect(lucky.map((run) => run.job.attemptsMade)).toEqual([0, 1, 2]);
    expect(lucky[1]!.at - lucky[0]!.at).toBeGreaterThanOrEqual(150 - CLOCK_SLACK_MS);
    expect(lucky[2]!.at - lucky[1]!.at).toBeGreaterThanOrEqual(300 - CLOCK_SLACK_MS);
    const hopeless = worked.runs.filter((run) => run.job.data === 'hopeless');
    expect(hopeless.map((run) => run.job.attemptsMade)).toEqual([0, 1]);
    // A failed job is kept a day for the operator, and holds its id meanwhile.
    await expect(queue.add('job', 'hopeless', { jobId: 'hopeless' })).resolves.toBe(false);
    await expect
      .poll(() => logLines.some((line) => line.startsWith('warn') && line.includes('hopeless failed')))
      .toBe(true);
  });

  it('runs no more jobs at once than its concurrency', async () => {
    const { queues } = await open();
    const queue = queues.queue<number>(nextName());
    const release = gate();
    const worked = recorder<number>(() => release.opened);
    queue.process(worked.processor, { concurrency: 2 });

    for (const n of [1, 2, 3, 4, 5]) await queue.add('job', n);
    await expect.poll(() => queue.counts()).toEqual({ waiting: 3, active: 2, delayed: 0 });
    // BullMQ counts a job active as it takes it, a moment before its processor is called.
    await expect.poll(() => worked.running()).toBe(2);
    release.open();
    await expect.poll(() => worked.runs.length).toBe(5);
    await expect.poll(() => queue.counts()).toEqual(idle);
    expect(worked.mostRunning()).toBe(2);
  });

  it('adds a job on every occurrence of a cron schedule, until unscheduled', async () => {
    const { queues } = await open();
    const queue = queues.queue<{ kind: string }>(nextName());
    const worked = recorder<{ kind: string }>();
    queue.process(worked.processor, { concurrency: 2 });

    const every = { pattern: '* * * * * *', timezone: 'Europe/Berlin' };
    await queue.schedule('tick', every, { name: 'tick', data: { kind: 'old' } });
    // Upserting the same scheduler replaces it: still one job per occurrence.
    await queue.schedule('tick', every, { name: 'tick', data: { kind: 'tick' } });
    await expect.poll(() => worked.runs.length).toBeGreaterThanOrEqual(2);
    // Says whether there was one to remove (a process without the schedule's settings warns then).
    expect(await queue.unschedule('tick')).toBe(true);
    expect(await queue.unschedule('tick')).toBe(false);
    expect(await queue.unschedule('never-scheduled')).toBe(false);

    expect(worked.runs.map((run) => run.job.name)).toEqual(worked.runs.map(() => 'tick'));
    expect(worked.runs.map((run) => run.job.data)).toContainEqual({ kind: 'tick' });
    // Each job names its occurrence: a whole second, at or before the time it ran.
    for (const { job, at } of worked.runs) {
      expect((job.scheduledFor ?? Number.NaN) % 1000).toBe(0);
      expect(job.scheduledFor).toBeLessThanOrEqual(at + CLOCK_SLACK_MS);
      expect(job.scheduledFor).toBeGreaterThan(at - 10_000); // run late on a busy machine, but for its own second
    }
    // One job per occurrence: each names a second of its own.
    const occurrences = worked.runs.map(({ job }) => job.scheduledFor ?? Number.NaN);
    for (const [i, occurrence] of occurrences.slice(1).entries()) {
      expect(occurrence - occurrences[i]!).toBeGreaterThanOrEqual(1_000);
    }
    await expect.poll(() => queue.counts()).toEqual(idle);
    const ticksAfterUnschedule = worked.runs.length;
    // Nothing more comes: a witness on the same schedule runs on the next occurrences, and no tick with it.
    await queue.schedule('witness', every, { name: 'witness', data: { kind: 'witness' } });
    const witnessed = () => worked.runs.filter((run) => run.job.name === 'witness');
    await expect.poll(() => witnessed().length).toBeGreaterThanOrEqual(2);
    await queue.unschedule('witness');
    expect(worked.runs.filter((run) => run.job.name === 'tick')).toHaveLength(ticksAfterUnschedule);
  });

  it('on close, aborts a processor that outlasts the grace and gives its job back', async () => {
    const name = nextName();
    const first = await open();
    const queue = first.queues.queue<string>(name);
    let closeStarted = Number.NaN;
    let abortedAfter: number | undefined;
    const stuck = recorder<string>(
      (_job, signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            abortedAfter = Date.now() - closeStarted;
            reject(signal.reason);
          }),
        ),
    );
    queue.process(stuck.processor, { concurrency: 1 });
    await queue.add('job', 'long', { jobId: 'long' });
    await expect.poll(() => stuck.runs.length).toBe(1);

    closeStarted = Date.now();
    await first.queues.close(300);
    // Aborted, and not before its grace: the floor is the behaviour (a slow machine only adds to it).
    expect(abortedAfter).toBeGreaterThanOrEqual(300 - CLOCK_SLACK_MS);
    expect(first.connectionOpen()).toBe(true);

    if (!harness.shared) {
      await expect(queue.counts()).resolves.toEqual({ waiting: 1, active: 0, delayed: 0 });
      return;
    }
    const next = await open();
    const worked = recorder<string>();
    next.queues.queue<string>(name).process(worked.processor, { concurrency: 1 });
    await expect.poll(() => worked.runs.length).toBe(1);
    expect(worked.runs[0]!.job).toMatchObject({ id: 'long', data: 'long', attemptsMade: 0 });
  });

  it('on close, lets a running processor add to another queue: work ending as the bot stops hands on what follows', async () => {
    const { queues } = await open();
    const working = queues.queue<string>(nextName());
    const next = queues.queue<string>(nextName());
    const release = gate();
    const adds: boolean[] = [];
    const ending = recorder<string>(async () => {
      await release.opened;
      adds.push(await next.add('job', 'follow-up', { jobId: 'follow-up' }));
    });
    working.process(ending.processor, { concurrency: 1 });
    await working.add('job', 'ending');
    await expect.poll(() => ending.runs.length).toBe(1);

    const closed = queues.close(5_000); // no job starts from here on
    release.open();
    await closed;
    expect(adds).toEqual([true]);
    if (!harness.shared) return;
    const another = await open();
    const worked = recorder<string>();
    another.queues.queue<string>(next.name).process(worked.processor, { concurrency: 1 });
    await expect.poll(() => worked.runs.map((run) => run.job.data)).toEqual(['follow-up']);
  });

  it('closes even when a processor ignores its signal', async () => {
    const { queues } = await open();
    const queue = queues.queue<string>(nextName());
    const release = gate();
    const deaf = recorder<string>(() => release.opened);
    queue.process(deaf.processor, { concurrency: 1 });
    await queue.add('job', 'deaf');
    await expect.poll(() => deaf.runs.length).toBe(1);

    // The processor ends only once released, after the close: a close that waited for it never would.
    await queues.close(200);
    expect(deaf.running()).toBe(1);
    release.open();
  });

  it.skipIf(!harness.shared)('runs each job once across two processes', async () => {
    const name = nextName();
    const worked = recorder<number>(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    const processes = [await open(), await open()];
    for (const { queues } of processes)
      queues.queue<number>(name).process(worked.processor, { concurrency: 3 });
    const queue = processes[0]!.queues.queue<number>(name);
    const numbers = Array.from({ length: 30 }, (_, i) => i);
    for (const n of numbers) await queue.add('job', n, { jobId: `job-${n}` });

    await expect.poll(() => worked.runs.length).toBe(30);
    await expect.poll(() => queue.counts()).toEqual(idle);
    expect(worked.runs.map((run) => run.job.data).sort((a, b) => a - b)).toEqual(numbers);
  });
});

/** A client as the bot's: commands fail at once while Redis is away, reconnects keep trying. */
async function connectAsTheBot(url: string): Promise<RedisClientType> {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) },
  }) as RedisClientType;
  client.on('error', () => {});
  await client.connect();
  return client;
}

describe('the queue port in memory', () => {
  it('lets a withdrawal lapse after WITHDRAWN_KEPT_MS, as its Redis key does', async () => {
    let now = Date.parse('2026-11-25T09:00:00Z');
    const queues = openMemoryQueues({ logger, now: () => now });
    const queue = queues.queue<string>('requests');
    await queue.withdraw('every');
    const marks = processWithdrawnMarks(queue);
    await queue.add('job', 'within the day', { jobId: 'every' });
    await expect.poll(() => marks.length).toBe(1);

    now += WITHDRAWN_KEPT_MS;
    await queue.withdraw('another'); // and the lapsed mark is let go
    now += 1_000_000; // past the time the finished job's id is kept
    await queue.add('job', 'a day later', { jobId: 'every' });
    await expect.poll(() => marks.length).toBe(2);
    expect(marks).toEqual([
      ['within the day', true],
      ['a day later', false],
    ]);
    await queues.close(0);
  });
});

describe('the queue port on bullmq while Redis is away', () => {
  let redis: PrivateRedis | undefined;
  let client: RedisClientType | undefined;
  let queues: Queues | undefined;
  afterAll(async () => {
    await queues?.close(0);
    client?.destroy();
    await redis?.close();
  });

  it('keeps the process responsive, and lands a running job’s `again` once Redis is back', async () => {
    redis = await startPrivateRedis();
    client = await connectAsTheBot(redis.url);
    queues = openBullmqQueues({ client, prefix: 'outage', logger });
    const queue = queues.queue<{ round: number }>('follow');
    const release = gate();
    const worked = recorder<{ round: number }>(async (job) => {
      if (job.data.round > 1) return undefined;
      await release.opened;
      return { again: { delayMs: 100, data: { round: 2 } } };
    });
    queue.process(worked.processor, { concurrency: 1 });
    await queue.add('check', { round: 1 }, { jobId: 'check-1' });
    await expect.poll(() => worked.runs.length).toBe(1);

    await redis.stop({ keepData: true });
    release.open();
    // The job's end cannot reach Redis. A worker spinning on its failed commands would starve every
    // timer and socket: Redis's start below (a spawn, then polled every 25 ms) would never end.
    await expect(queue.add('check', { round: 1 })).rejects.toThrow();

    await redis.start();
    await expect
      .poll(() => worked.runs.map((run) => run.job.data.round), { timeout: 10_000 })
      .toEqual([1, 2]);
    expect(worked.runs[1]!.job).toMatchObject({ id: 'check-1', attemptsMade: 0 });
  });
});

describe('the queue port on bullmq closed while Redis is away', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const openAway = async () => {
    const redis = await startPrivateRedis();
    const client = await connectAsTheBot(redis.url);
    // The workers' connection is a duplicate of the bot's client: kept to see when it finds Redis gone
    // (the log cannot say: one line stands for the same error from every queue and worker).
    const duplicates: RedisClientType[] = [];
    const duplicate = client.duplicate.bind(client);
    client.duplicate = ((...args: Parameters<typeof duplicate>) => {
      const made = duplicate(...args);
      duplicates.push(made as RedisClientType);
      return made;
    }) as typeof client.duplicate;
    const queues = openBullmqQueues({ client, prefix: 'closing-away', logger });
    cleanups.push(
      () => redis.close(),
      async () => client.destroy(),
      () => queues.close(0),
    );
    const workersFoundRedisGone = () => duplicates.length > 0 && duplicates.every((made) => !made.isReady);
    return { redis, queues, workersFoundRedisGone };
  };

  it('closes at once when no job runs: nothing is held, so nothing waits for Redis or the grace', async () => {
    const { redis, queues, workersFoundRedisGone } = await openAway();
    const queue = queues.queue<string>('requests');
    const worked = recorder<string>();
    queue.process(worked.processor, { concurrency: 1 });
    await queue.add('job', 'before the outage');
    await expect.poll(() => worked.runs.length).toBe(1);
    // Its completion on Redis too (a job whose end has not landed is still held).
    await expect.poll(() => queue.counts()).toEqual({ waiting: 0, active: 0, delayed: 0 });
    const linesBefore = logLines.length;

    await redis.stop();
    await expect.poll(workersFoundRedisGone).toBe(true);
    // A minute's grace: a close that waited on its worker's commands, held for Redis, would take it all.
    await queues.close(60_000);
    expect(logLines.slice(linesBefore).join('\n')).not.toContain('Queues closed before their workers did');
  });

  it('gives a running job its grace: its processor runs to its end, and the close says the job is still held', async () => {
    const { redis, queues, workersFoundRedisGone } = await openAway();
    const queue = queues.queue<string>('requests');
    const release = gate();
    let abortedAtItsEnd: boolean | undefined;
    const worked = recorder<string>(async (_job, signal) => {
      await release.opened;
      abortedAtItsEnd = signal.aborted;
    });
    queue.process(worked.processor, { concurrency: 1 });
    await queue.add('job', 'running as Redis goes');
    await expect.poll(() => worked.running()).toBe(1);
    const linesBefore = logLines.length;

    await redis.stop();
    // The worker's connection has found Redis gone (not only the queue's): its job's end then waits
    // for Redis rather than failing on a connection that is about to close.
    await expect.poll(workersFoundRedisGone, { timeout: 30_000 }).toBe(true);
    const closed = queues.close(1_000);
    release.open();
    await closed;
    expect(abortedAtItsEnd).toBe(false);
    // Its end could not reach Redis: the job goes back to the queue once its lock lapses.
    expect(logLines.slice(linesBefore).join('\n')).toContain('Queues closed before their workers did');
  });
});

describe('the queue port on bullmq set up while Redis goes away', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  /** A queue and its worker made while their first commands get no answer, then Redis gone under them. */
  const setUpAsRedisGoes = async (prefix: string) => {
    const redis = await startPrivateRedis();
    const proxy = await startMuteProxy(redis);
    const client = await connectAsTheBot(proxy.url);
    // Made again 0.2 s after a failed setup, doubling (the bot's: 2 s).
    const queues = openBullmqQueues({ client, prefix, logger, setUpAgainMs: 200 });
    closers.push(
      () => redis.close(),
      () => proxy.close(),
      async () => client.destroy(),
      () => queues.close(0),
    );
    proxy.mute();
    const queue = queues.queue<string>('requests');
    const worked = recorder<string>(async () => undefined);
    queue.process(worked.processor, { concurrency: 1 });
    await redis.stop();
    proxy.speak();
    return { redis, queue, worked };
  };

  it('sets its queue and worker up again once Redis answers: adds land and run (BullMQ sets each up once)', async () => {
    const linesBefore = logLines.length;
    const { redis, queue, worked } = await setUpAsRedisGoes('setup');
    await expect
      .poll(() => logLines.slice(linesBefore).some((line) => line.includes('Queue error in queue requests')))
      .toBe(true);
    await redis.start();

    await expect
      .poll(async () => queue.add('job', 'after the outage').catch(() => false), { timeout: 15_000 })
      .toBe(true);
    await expect
      .poll(() => worked.runs.map((run) => run.job.data), { timeout: 15_000 })
      .toEqual(['after the outage']);
    // Said once, however many tries it took: the failed setup, then the one that took.
    const lines = logLines.slice(linesBefore);
    expect(lines.filter((line) => line.includes('could not be set up on Redis'))).toEqual([
      expect.stringMatching(
        /^warn queue requests could not be set up on Redis \(.+\); it is set up again until Redis answers$/,
      ),
    ]);
    expect(lines.filter((line) => line.includes('is set up on Redis now'))).toEqual([
      'info queue requests is set up on Redis now',
    ]);
  });

  it('never sends an add given up while it waited for Redis, and sends the others once Redis answers', async () => {
    const { redis, queue, worked } = await setUpAsRedisGoes('abandon');
    // Once the queue is made again (its setup failed), an add waits for Redis instead of failing.
    const waiting = async (data: string) => {
      const submission = queue.submit('job', data, { jobId: data });
      submission.queued.catch(() => {});
      const settled = await Promise.race([
        submission.queued.then(
          () => true,
          () => true,
        ),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 300)),
      ]);
      if (settled) throw new Error('the add did not wait');
      return submission;
    };
    const abandoned = await vi.waitFor(() => waiting('abandoned'), { timeout: 15_000, interval: 200 });
    const kept = await waiting('kept');
    abandoned.abandon();
    await redis.start();

    await expect(kept.queued).resolves.toBeUndefined();
    await expect(abandoned.queued).rejects.toThrow('given up before it was sent');
    expect(abandoned.mayHaveLanded).toBe(false);
    await expect.poll(() => worked.runs.map((run) => run.job.data), { timeout: 15_000 }).toEqual(['kept']);
  });
});

describe('the queue port on bullmq, one process', () => {
  const prefix = uniqueNamespace('bullmq');
  let client: RedisClientType | undefined;
  let queues: Queues | undefined;
  const openOnRedis = async (options: { lockMs?: number; setUpAgainMs?: number } = {}) => {
    const redis = createClient({ url: REDIS_URL, disableOfflineQueue: true }) as RedisClientType;
    redis.on('error', () => {});
    await redis.connect();
    client = redis;
    queues = openBullmqQueues({ client: redis, prefix, logger, ...options });
    return { queues, redis };
  };
  afterEach(async () => {
    vi.restoreAllMocks();
    await queues?.close(0);
    if (client) {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
        if (keys.length > 0) await client.del(keys);
      }
      await client.quit();
    }
    client = undefined;
    queues = undefined;
  });

  it('on close, gives its grace to a job run by a worker made again meanwhile (its set-up found broken as the job ran)', async () => {
    // The worker's set-up fails after its first connection took a job (its blocking connection lost
    // as it opened): the worker is made again, and the one running the job is left to finish it.
    const setUp = Worker.prototype.waitUntilReady;
    let failSetUp = (_error: Error) => {};
    const spy = vi
      .spyOn(Worker.prototype, 'waitUntilReady')
      .mockImplementationOnce(() => new Promise<void>((_resolve, reject) => (failSetUp = reject)));
    spy.mockImplementation(function (this: Worker) {
      return setUp.call(this);
    });
    const { queues } = await openOnRedis({ setUpAgainMs: 50 });
    const queue = queues.queue<string>('requests');
    let abortedAtItsEnd: boolean | undefined;
    const worked = recorder<string>(async (_job, signal) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      abortedAtItsEnd = signal.aborted;
    });
    queue.process(worked.processor, { concurrency: 1 });
    await queue.add('job', 'running as its worker is made again');
    await expect.poll(() => worked.running()).toBe(1);
    failSetUp(new Error('read ECONNRESET'));
    await expect.poll(() => spy.mock.calls.length).toBe(2); // the worker made again

    // The close waits for the job until the grace, then cuts it short: it goes back to the queue.
    await queues.close(300);
    expect(abortedAtItsEnd).toBe(true);
  });

  it('reads a cron pattern as croner does, as the configuration check and the catch-up do, in the queue and in its worker', async () => {
    const { queues, redis } = await openOnRedis();
    const queue = queues.queue<string>('digest');
    const runs: Array<number | undefined> = [];
    queue.process(
      async (job) => {
        runs.push(job.scheduledFor);
        return undefined;
      },
      { concurrency: 1 },
    );
    // The last Friday of the month: croner reads `5#L`; BullMQ's own reader, cron-parser, refuses it.
    const repeat = { pattern: '0 9 * * 5#L', timezone: 'Europe/Paris' };
    await queue.schedule('monthly', repeat, { name: 'digest', data: 'x' });
    const bullmq = new Queue('digest', { connection: createNodeRedisClient(redis), prefix });
    try {
      const first = nextCronRun(repeat.pattern, repeat.timezone, new Date())?.getTime();
      expect((await bullmq.getJobScheduler('monthly'))?.next).toBe(first);
      // At 09:00 in the schedule's time zone, whatever the machine's.
      const inParis = {
        timeZone: repeat.timezone,
        weekday: 'long',
        hour: '2-digit',
        minute: '2-digit',
      } as const;
      expect(new Date(first ?? 0).toLocaleString('en-GB', inParis)).toBe('Friday 09:00');
      // Its occurrence run now: the worker schedules the one after it, as croner reads it too.
      const [due] = await bullmq.getDelayed();
      await due?.promote();
      await expect.poll(() => runs).toEqual([first]);
      const second = nextCronRun(repeat.pattern, repeat.timezone, new Date(first ?? 0))?.getTime();
      await expect.poll(async () => (await bullmq.getJobScheduler('monthly'))?.next).toBe(second);
      expect(second).toBeGreaterThan((first ?? 0) + 27 * 86_400_000);
    } finally {
      await bullmq.close();
    }
  });

  it('does not write a job run again as it was (one round trip less per run), and writes changed data', async () => {
    const { queues } = await openOnRedis();
    const writes = vi.spyOn(Job.prototype, 'updateData');
    const queue = queues.queue<{ round: number }>('follow');
    const rounds: number[] = [];
    queue.process(
      async (job) => {
        rounds.push(job.data.round);
        if (rounds.length >= 4) return undefined;
        // Twice as it was, then changed.
        return { again: { delayMs: 20, data: { round: rounds.length < 3 ? 1 : 2 } } };
      },
      { concurrency: 1 },
    );
    await queue.add('check', { round: 1 }, { jobId: 'check-1' });
    await expect.poll(() => rounds.length).toBe(4);
    expect(rounds).toEqual([1, 1, 1, 2]);
    expect(writes).toHaveBeenCalledTimes(1);
  });

  it('tells of a job whose lock lapsed in plain words, once, as a warning: the queue runs it again, and its first run finds it gone', async () => {
    const { queues, redis } = await openOnRedis({ lockMs: 1_000 });
    const queue = queues.queue<string>('lapsing');
    const release = gate();
    const worked = recorder<string>(async () => {
      if (worked.runs.length === 1) await release.opened; // the first run outlasts its lock
      return undefined;
    });
    // Room for the run again while the first still runs.
    queue.process(worked.processor, { concurrency: 2 });
    const linesBefore = logLines.length;
    await queue.add('check', 'x', { jobId: 'lapse-1' });
    await expect.poll(() => worked.runs.length).toBe(1);

    // The lock goes, as after Redis away or a stall longer than the lock: its renewals fail, the
    // stalled-job check runs the job again, and the first run's end finds its lock gone.
    const [lockKey] = await redis.keys(`${prefix}:lapsing:lapse-1:lock`);
    expect(lockKey).toBeDefined();
    await redis.del(String(lockKey));
    await expect.poll(() => worked.runs.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => worked.running()).toBe(1); // the run again is done
    release.open();
    // The first run's last step finds the job finished by its run again (a finished job is not kept).
    const isGone = (line: string) => line.includes('a job was gone when its run ended');
    await expect.poll(() => logLines.slice(linesBefore).some(isGone)).toBe(true);

    const lines = logLines.slice(linesBefore);
    expect(lines.filter((line) => line.startsWith('error'))).toEqual([]);
    const told = lines.filter((line) => line.includes("a job's lock lapsed while it ran"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^warn worker lapsing: .*QUEUE_LOCK_MS.* runs it again/);
    const gone = lines.filter(isGone);
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatch(/^warn worker lapsing: .*another run finished it, or Redis lost it/);
  });
});
