import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAY_HAVE_QUEUED, TRY_AGAIN_SHORTLY } from '../../src/listeners/context.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type MuteProxy, startMuteProxy } from '../support/muteProxy.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

/**
 * The queue's connection drops with a command's add in flight: Redis ran the add, the bot never
 * heard. The person must not be told "nothing was started" (asking again would start it twice).
 */
describe('a command whose add reached Redis, but whose answer was lost with the connection', () => {
  let redis: PrivateRedis;
  let proxy: MuteProxy;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    proxy = await startMuteProxy(redis);
    h = await startBot({ env: { REDIS_URL: proxy.url } });
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
    await redis?.close();
  });

  it('is answered "it may go ahead anyway", and goes ahead once', async () => {
    proxy.cutAfter('Document the lost answer');
    const answer = await h.command('Document the lost answer');
    expect(answer.json).toMatchObject({ response_type: 'ephemeral', text: MAY_HAVE_QUEUED });
    expect(MAY_HAVE_QUEUED).not.toBe(TRY_AGAIN_SHORTLY);

    const prompts = () =>
      h.mintlify.requestsFor('createJob').map((request) => (request.body as { prompt: string }).prompt);
    await expect.poll(prompts, { timeout: 10_000 }).toEqual(['Document the lost answer']);
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();
    expect(prompts()).toEqual(['Document the lost answer']);
  });
});
