import { afterEach, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

let redis: PrivateRedis | undefined;
let h: BotHarness | undefined;
afterEach(async () => {
  await redis?.command('REPLICAOF NO ONE');
  await h?.close();
  await redis?.close();
});

it('stops, saying why, when Redis goes on answering as a read-only replica (a failover left its connections on the old primary), for its process manager to start it again', async () => {
  redis = await startPrivateRedis();
  const failures: Error[] = [];
  h = await startBot({
    env: { REDIS_URL: redis.url },
    readOnlyLimitMs: 1_000,
    onFailure: (error) => failures.push(error),
  });
  // The failover makes the Redis the bot is connected to a replica (of a primary it cannot reach
  // here): the bot's connections stay up, and every write is refused with READONLY.
  expect(await redis.command('REPLICAOF 127.0.0.1 1')).toContain('+OK');

  await expect.poll(() => failures.length, { timeout: 20_000 }).toBe(1);
  expect(failures[0]?.message).toMatch(/read-only replica for over/);
  expect(h.logs.filter((line) => line.includes('the process manager to start it again'))).toHaveLength(1);
});

it('with the web role alone, stops too when every request it queues is refused as by a read-only replica, for its process manager to start it again', async () => {
  redis = await startPrivateRedis();
  const failures: Error[] = [];
  h = await startBot({
    env: { REDIS_URL: redis.url, SERVICES: 'web' },
    readOnlyLimitMs: 1_000,
    onFailure: (error) => failures.push(error),
  });
  expect(await redis.command('REPLICAOF 127.0.0.1 1')).toContain('+OK');

  // People keep asking; each request is answered "try again shortly", as Redis refuses to queue it.
  await expect
    .poll(
      async () => {
        await h?.command('Document the failover');
        return failures.length;
      },
      { timeout: 10_000, interval: 250 },
    )
    .toBe(1);
  expect(failures[0]?.message).toMatch(/read-only replica for over/);
});
