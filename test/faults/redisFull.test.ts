import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_POLL, startFollowedJob, textOf, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { mentionEvent } from '../support/slackRequests.js';
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
    h = await startBot({ env: { ...FAST_POLL, REDIS_URL: redis.url }, recordAgainEveryMs: 200 });
  });
  afterAll(async () => {
    await redis?.command('CONFIG SET maxmemory 0');
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

  it('keeps following a job while Redis is full, tells its end once Redis takes writes again, and says why in plain words', async () => {
    const job = await startFollowedJob(h, 'Document the quotas', 'C0QUOTA');
    const before = h.logs.length;
    const reads = h.mintlify.requestsFor('getJob').length;
    expect(await redis.command('CONFIG SET maxmemory 1')).toContain('+OK');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: 'https://github.com/acme/docs/pull/9' });
    // An event Redis cannot take: Slack is given an error, and the log says why in plain words.
    const mention = mentionEvent({ text: '<@U0BOT> Document X', ts: '1800000001.000100' });
    expect((await h.event(mention, { eventId: 'EvFULL' })).status).toBe(500);
    // Checks of the job meet the full Redis.
    await expect
      .poll(() => h.mintlify.requestsFor('getJob').length, { timeout: 10_000 })
      .toBeGreaterThan(reads);
    // The check cannot queue the job's next one: the follow is the part Redis may lose.
    await expect
      .poll(() => logged(`job ${job.jobId} could not be queued for following: Redis is full`).length, {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    expect(await redis.command('CONFIG SET maxmemory 0')).toContain('+OK');

    // The job is still followed: its end is told within seconds, not at the next check of the queues (10 minutes).
    await expect.poll(() => threadReplies(h, job).length, { timeout: 15_000 }).toBe(1);
    const lines = h.logs.slice(before).filter((line) => !line.includes(' DEBUG '));
    expect(lines.filter((line) => line.includes('failed for good'))).toEqual([]);
    expect(lines.filter((line) => line.includes('a Slack request was not queued'))).toEqual([
      expect.stringContaining('a Slack request was not queued: Redis is full (its maxmemory is reached'),
    ]);
    expect(lines.filter((line) => line.includes('OOM command not allowed'))).toEqual([]);
  });
});

describe('Redis already full when the bot starts', () => {
  it('says in plain words that the queues’ work could not be set up because Redis is full', async () => {
    const redis = await startPrivateRedis();
    const env = { REDIS_URL: redis.url, DIGEST_CHANNEL: 'C0DIGEST' };
    // A bot ran on this Redis before (its key layout is written); Redis filled up meanwhile.
    const before = await startBot({ env, namespace: 'full-at-start' });
    await before.close();
    expect(await redis.command('CONFIG SET maxmemory 1')).toContain('+OK');
    const h = await startBot({ env, namespace: 'full-at-start' });
    try {
      const setUp = () => h.logs.find((line) => line.includes("could not set up the queues' work"));
      await expect.poll(setUp, { timeout: 10_000 }).toBeDefined();
      // As README.md's Troubleshooting names it, not Redis's own reply naming a Lua script by its hash.
      expect(setUp()).toContain('Redis is full (its maxmemory is reached, and it refuses writes)');
      expect(setUp()).not.toContain('OOM command not allowed');
    } finally {
      await redis.command('CONFIG SET maxmemory 0');
      await h.close();
      await redis.close();
    }
  });
});
