import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { heldStep } from '../support/leases.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

/**
 * A Redis that is full (`maxmemory` reached, `noeviction` as the bot asks) refuses writes with an
 * OOM error reply: work waits for it as for a Redis away, and nothing Mintlify made is lost.
 */
describe('Redis full for a while during a run', () => {
  let redis: PrivateRedis;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    h = await startBot({ env: { REDIS_URL: redis.url }, recordAgainEveryMs: 200 });
  });
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });

  const logged = (text: string) => h.logs.filter((line) => line.includes(text));

  it('keeps a job Mintlify created as Redis filled up: recorded once it takes writes again, its card posted once', async () => {
    const channel = 'C0FULL';
    const answer = heldStep();
    h.mintlify.injectFault('createJob', { until: answer.until });
    await h.command('Document the size limits', { channel_id: channel });
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(1);
    // Full before Mintlify answers: the job exists, and Redis refuses its record.
    expect(await redis.command('CONFIG SET maxmemory 1')).toContain('+OK');
    answer.release();
    await expect
      .poll(() => logged('was created at Mintlify, but Redis is full').length, { timeout: 10_000 })
      .toBe(1);
    expect(await redis.command('CONFIG SET maxmemory 0')).toContain('+OK');

    const card = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.channel === channel,
      20_000,
    );
    expect(textOf(card)).toContain('Document the size limits');
    await h.bot.drained(20_000);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === channel)).toHaveLength(
      1,
    );
    const answers = h.slack.callsTo('response_url').map((call) => textOf(call));
    expect(answers.join('\n')).not.toMatch(/something went wrong|interrupted/i);
    expect(logged('could not be recorded')).toHaveLength(0);
  });
});
