import { afterEach, describe, expect, it } from 'vitest';
import { DigestRecords } from '../../src/digest/digestRecords.js';
import { periodOfRun } from '../../src/digest/period.js';
import { previousScheduledRun } from '../../src/queue/cron.js';
import { createLogger } from '../../src/log.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from '../support/botHarness.js';
import { type BotProcess, botEnv, runBot } from '../support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const CHANNEL = 'C0DIGEST';
const WEEKLY = { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'Europe/Paris' };

const bots: BotProcess[] = [];
const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const bot of bots.splice(0)) bot.child.kill('SIGKILL');
  await Promise.all(closing.splice(0).map((thing) => thing.close()));
});

describe('a worker killed in the middle of a digest', () => {
  it('leaves the digest to another worker, which posts it once', async () => {
    const slack: SlackFake = await startSlackFake({ botToken: SECRETS.botToken });
    const mintlify: MintlifyFake = await startMintlifyFake({
      apiKey: SECRETS.mintlifyKey,
      projectId: PROJECT_ID,
    });
    closing.push(slack, mintlify);
    mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    const env = botEnv(slack, mintlify, {
      ...WEEKLY,
      REDIS_URL: TEST_REDIS_URL,
      STORE_NAMESPACE: uniqueNamespace('digest-crash'),
      // The dead worker's lock lapses after this, and its digest is taken over.
      QUEUE_LOCK_MS: '2000',
    });
    // The first worker reads the visitors and never hears back: it is killed mid-digest.
    mintlify.injectFault('visitors', { delayMs: 60_000 });
    const first = runBot(env);
    bots.push(first);
    await first.printed(/docs-agent worker is running/);
    await expect.poll(() => mintlify.requestsFor('visitors').length, { timeout: 20_000 }).toBe(1);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = runBot(env);
    bots.push(second);
    await second.listening();
    await second.printed(/posted the catch-up digest/, 30_000);
    expect(slack.callsTo('chat.postMessage').filter((call) => call.args.channel === CHANNEL)).toHaveLength(1);

    const store = await openRedisStore({
      url: TEST_REDIS_URL,
      namespace: env.STORE_NAMESPACE as string,
      logger: createLogger({ level: 'error', secrets: [], sink: () => {} }),
    });
    closing.push(store);
    const period = periodOfRun(
      previousScheduledRun(WEEKLY.DIGEST_CRON, WEEKLY.DIGEST_TIMEZONE, new Date()) as Date,
      WEEKLY.DIGEST_TIMEZONE,
    );
    expect(await new DigestRecords(store).posted(period, CHANNEL)).toBeDefined();
  }, 90_000);
});
