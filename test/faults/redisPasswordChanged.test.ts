import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FAST_POLL, startFollowedJob } from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

/** Redis's password for the bot's ACL user changes while the bot runs (rotated by the provider or an operator). */
describe('Redis refuses the password once the bot reconnects', () => {
  let redis: PrivateRedis;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    await redis.command('ACL SETUSER bot on >first-secret ~* &* +@all');
    h = await startBot({
      env: { ...FAST_POLL, REDIS_URL: redis.url.replace('redis://', 'redis://bot:first-secret@') },
    });
  });
  afterAll(async () => {
    await redis?.command('ACL SETUSER bot on resetpass >first-secret');
    await h?.close();
    await redis?.close();
  });

  const logsWith = (text: string) => h.logs.filter((line) => line.includes(text));
  const refusedLogins = async () =>
    [...(await redis.command('ACL LOG')).matchAll(/count\r\n:(\d+)/g)].reduce(
      (sum, [, count]) => sum + Number(count),
      0,
    );

  it(
    'names the refused password in the bot’s own words, once, and says when Redis takes it again',
    { timeout: 60_000 },
    async () => {
      await startFollowedJob(h, 'Document the export command');
      // The password changes, and Redis drops the bot's connections (as a restart or a kill would).
      await redis.command('ACL SETUSER bot resetpass >second-secret');
      await redis.command('CLIENT KILL USER bot');

      const refused = 'Redis refuses the user name or password in REDIS_URL (WRONGPASS)';
      await expect.poll(() => logsWith(refused).length, { timeout: 15_000 }).toBeGreaterThan(0);
      expect(logsWith(refused).join('\n')).toContain(
        'the password was changed, or the ACL user disabled, while the bot ran: set REDIS_URL to the new one and restart the bot',
      );
      // Reconnections are tried for good, every few seconds: the store says it once, BullMQ's queues once each burst.
      // Redis's ACL LOG counts the logins it refused: wait for two more rounds of them than when it was said.
      const firstRound = await refusedLogins();
      expect(firstRound).toBeGreaterThan(0);
      await expect.poll(refusedLogins, { timeout: 20_000 }).toBeGreaterThanOrEqual(firstRound * 3);
      expect(logsWith(`ERROR docs-agent ${refused}`)).toHaveLength(1);
      expect(logsWith('WRONGPASS invalid username-password pair')).toHaveLength(0);

      // The old password back: the bot reconnects by itself.
      await redis.command('ACL SETUSER bot resetpass >first-secret');
      await expect.poll(() => logsWith('Redis is reachable again').length, { timeout: 15_000 }).toBe(1);
    },
  );
});

/** Redis takes no more clients (its maxclients, the plan's connection limit) as the bot's connections open again. */
describe('Redis refuses more clients once the bot reconnects', () => {
  it(
    'says that Redis has as many clients as it takes, not only that it is unreachable',
    { timeout: 60_000 },
    async () => {
      // With a password, as every hosted Redis has.
      const redis = await startPrivateRedis();
      await redis.command('ACL SETUSER bot on >plan-password ~* &* +@all');
      const h = await startBot({
        env: { ...FAST_POLL, REDIS_URL: redis.url.replace('redis://', 'redis://bot:plan-password@') },
      });
      // A client of another process on the same Redis, holding its connection throughout.
      const other = connect(redis.port, '127.0.0.1');
      await once(other, 'connect');
      const send = async (line: string) => {
        const reply = once(other, 'data');
        other.write(`${line}\r\n`);
        return String((await reply)[0]);
      };
      try {
        await startFollowedJob(h, 'Document the export command');
        // The other processes hold every connection the plan allows, and the bot's drop (a Redis
        // restart, an idle timeout): each of its reconnections is refused, "max number of clients reached".
        expect(await send('CONFIG SET maxclients 1')).toContain('+OK');
        expect(await send('CLIENT KILL TYPE normal SKIPME yes')).toMatch(/^:\d+/);
        await expect.poll(() => h.logs.some((line) => line.includes('Redis is unreachable'))).toBe(true);

        // What the operator must change is named, as at start ("it has as many clients as it takes").
        await expect
          .poll(
            () =>
              h.logs.some(
                (line) =>
                  line.includes(' ERROR ') && /maxclients|connection limit|as many clients/.test(line),
              ),
            { timeout: 15_000 },
          )
          .toBe(true);
      } finally {
        await send('CONFIG SET maxclients 10000');
        other.destroy();
        await vi.waitFor(
          () => expect(h.logs.some((line) => line.includes('Redis is reachable again'))).toBe(true),
          { timeout: 15_000 },
        );
        await h.close();
        await redis.close();
      }
    },
  );
});
