import { afterEach, describe, expect, it, vi } from 'vitest';
import { openMemoryQueues } from '../../src/queue/memoryQueues.js';
import { silentLogger } from '../support/loggers.js';

const logger = silentLogger;

afterEach(() => {
  vi.useRealTimers();
});

describe('the schedule of the queue in memory', () => {
  it('names the occurrence that was due, not the time its timer fired, when it fires late', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-22T12:00:00Z') }); // a Sunday
    const queues = openMemoryQueues({ logger });
    const queue = queues.queue<string>('digest');
    const scheduledFor: Array<number | undefined> = [];
    queue.process(
      async (job) => {
        scheduledFor.push(job.scheduledFor);
        return undefined;
      },
      { concurrency: 1 },
    );
    await queue.schedule('weekly', { pattern: '0 9 * * 1', timezone: 'UTC' }, { name: 'digest', data: 'x' });

    // The machine sleeps through Monday 09:00 and wakes on Tuesday: the clock jumps, then the timer fires.
    vi.setSystemTime(new Date('2026-11-24T10:00:00Z'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(scheduledFor).toEqual([Date.parse('2026-11-23T09:00:00Z')]);
    await queues.close(0);
  });
});

describe('the queue in memory', () => {
  it('tries a failed job again after backoffMs, then after twice that: a digest that failed is retried when set, not later', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-23T09:00:00Z') });
    const queues = openMemoryQueues({ logger });
    const queue = queues.queue<string>('digest');
    const triedAt: number[] = [];
    queue.process(
      async () => {
        triedAt.push(Date.now());
        throw new Error('Mintlify did not answer');
      },
      { concurrency: 1 },
    );
    await queue.add('digest', 'x', { attempts: 3, backoffMs: 60_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(triedAt).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(60_000);
    expect(triedAt).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(triedAt.map((at) => at - triedAt[0]!)).toEqual([0, 60_000, 180_000]);
    await queues.close(0);
  });
});

describe('the completed and failed jobs the queue in memory keeps', () => {
  it('are at most 5,000 completed and 1,000 failed, the newest, as on Redis: a burst of requests does not pile up for their ten minutes', async () => {
    const queues = openMemoryQueues({ logger });
    const queue = queues.queue<string>('requests', { keepCompletedMs: 600_000 });
    let runs = 0;
    queue.process(
      async (job) => {
        runs++;
        if (job.data.startsWith('bad')) throw new Error('Slack did not answer');
        return undefined;
      },
      { concurrency: 16 },
    );
    for (let n = 0; n <= 5_000; n++) await queue.add('request', `good ${n}`, { jobId: `good-${n}` });
    for (let n = 0; n <= 1_000; n++) await queue.add('request', `bad ${n}`, { jobId: `bad-${n}` });
    await vi.waitFor(() => expect(runs).toBe(6_002), { timeout: 10_000 });

    // The oldest of each went, as BullMQ's count removes it; the newest still hold their ids.
    await expect(queue.add('request', 'good again', { jobId: 'good-1' })).resolves.toBe(false);
    await expect(queue.add('request', 'good again', { jobId: 'good-5000' })).resolves.toBe(false);
    await expect(queue.add('request', 'bad again', { jobId: 'bad-1' })).resolves.toBe(false);
    await expect(queue.add('request', 'bad again', { jobId: 'bad-1000' })).resolves.toBe(false);
    await expect(queue.add('request', 'good again', { jobId: 'good-0' })).resolves.toBe(true);
    await expect(queue.add('request', 'bad again', { jobId: 'bad-0' })).resolves.toBe(true);
    await queues.close(0);
  });
});
