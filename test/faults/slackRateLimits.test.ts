import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';

let h: BotHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a rate limit from Slack', () => {
  it('on background work (a Home tab) holds up none of what a person waits for: the next card is posted meanwhile', async () => {
    h = await startBot();
    const bot = h;
    // Slack's client pauses every call it would make until a 429's Retry-After has passed.
    bot.slack.failNext('views.publish', { status: 429, retryAfter: 20 });
    await bot.command('Document the first flag', { channel_id: 'C0FIRST' });
    await bot.slack.waitForCall('views.publish', (call) => call.status === 429);

    await bot.command('Document the second flag', { channel_id: 'C0SECOND' });
    const card = await bot.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.channel === 'C0SECOND' && call.status === 200,
    );
    expect(card.response.ok).toBe(true);
    // The Home tab still waits out its Retry-After.
    expect(bot.slack.callsTo('views.publish').filter((call) => call.status === 200)).toHaveLength(0);
  });
});
