import { afterEach, describe, expect, it } from 'vitest';
import { dmEvent } from '../support/slackRequests.js';
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

  it('on the Home tabs holds up no one’s message to the bot, however many people open their Home tab meanwhile', async () => {
    h = await startBot();
    const bot = h;
    const openHome = (user: string) =>
      bot.event({
        type: 'app_home_opened',
        user,
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1800000000.000100',
      });
    // Slack's client pauses every call it would make until a 429's Retry-After has passed.
    bot.slack.failNext('views.publish', { status: 429, retryAfter: 8 });
    await openHome('U0P000');
    await bot.slack.waitForCall('views.publish', (call) => call.status === 429);
    // Meanwhile a team opens the bot's Home tab (a Monday morning, an announcement of the bot):
    // more people than the worker handles Slack requests at once.
    for (let i = 1; i <= 20; i += 1) await openHome(`U0P${String(i).padStart(3, '0')}`);

    // Someone asks the bot for help in its DM: nothing rate-limits the answer, so it comes at once.
    const dm = 'D0ADA';
    const asked = bot.slack.seedMessage(dm, { user: 'U0ADA', text: 'help' });
    await bot.event(dmEvent(dm, asked));
    const help = await bot.slack.waitForCall('chat.postMessage', (call) => call.args.channel === dm, 15_000);
    expect(String(help.args.text)).toContain('How to use the docs agent');
    // Before any Home tab could be published: it did not wait for their Retry-After.
    expect(bot.slack.callsTo('views.publish').filter((call) => call.status === 200)).toEqual([]);
  });
});
