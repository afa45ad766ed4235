import { createClient, type RedisClientType } from '@keyv/redis';
import { afterEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { openBullmqQueues } from '../../src/queue/bullmqQueues.js';
import { startPrivateRedis } from '../support/privateRedis.js';

afterEach(() => vi.restoreAllMocks());

it('leaves the eviction policy to the bot’s own one warning: BullMQ’s console lines, one per connection, are dropped', async () => {
  const redis = await startPrivateRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
  const printed = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const client = createClient({ url: redis.url, disableOfflineQueue: true }) as RedisClientType;
  client.on('error', () => {});
  await client.connect();
  const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
  const queues = openBullmqQueues({ client, prefix: 'eviction', logger });
  try {
    const queue = queues.queue<{ n: number }>('work');
    let ran = 0;
    queue.process(async () => void (ran += 1), { concurrency: 1 });
    await queue.add('one', { n: 1 });
    await expect.poll(() => ran).toBe(1); // set up and working: every connection checked the policy
    console.warn('a warning of anything else still shows');
    const lines = printed.mock.calls.map((call) => String(call[0]));
    expect(lines.filter((line) => line.includes('Eviction policy'))).toEqual([]);
    expect(lines).toContain('a warning of anything else still shows');
  } finally {
    await queues.close(1_000);
    await client.quit();
    await redis.close();
  }
});
