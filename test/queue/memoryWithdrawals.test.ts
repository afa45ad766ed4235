import { expect, it } from 'vitest';
import { openMemoryQueues } from '../../src/queue/memoryQueues.js';
import { WITHDRAWN_KEPT_MS } from '../../src/queue/queue.js';
import { silentLogger } from '../support/loggers.js';

const logger = silentLogger;

it('lets a withdrawal lapse after WITHDRAWN_KEPT_MS in memory, as its Redis key does', async () => {
  let now = Date.parse('2026-11-25T09:00:00Z');
  const queues = openMemoryQueues({ logger, now: () => now });
  const queue = queues.queue<string>('requests');
  await queue.withdraw('every');
  const marks: Array<[string, boolean]> = [];
  queue.process(
    async (job) => {
      marks.push([job.data, await queue.withdrawn(job)]);
      return undefined;
    },
    { concurrency: 1 },
  );
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
