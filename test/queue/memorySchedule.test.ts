import { type Logger, LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openMemoryQueues } from '../../src/queue/memoryQueues.js';

const logger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

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
