import { afterEach, describe, expect, it } from 'vitest';
import type { SlackCall } from '../fakes/slackFake.js';
import { heldStep } from '../support/leases.js';
import { type BotHarness, startBot } from '../support/botHarness.js';

let h: BotHarness;
afterEach(async () => h?.close());

const shown = (call: SlackCall) => JSON.stringify(call.args.view);

describe('the agent budget after Mintlify refused a use for its limit', () => {
  it('still says none is left when a use Mintlify took before the refusal is answered after it', async () => {
    h = await startBot();
    // A start whose create reached Mintlify first, and whose answer is slow to come back.
    const answer = heldStep();
    h.mintlify.injectFault('createJob', { until: answer.until });
    await h.command('Document the export flag', { user_id: 'U0ADA', channel_id: 'C0DOCS' });
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(1);

    // Meanwhile another start is refused: Mintlify's hour is spent, come back in an hour.
    h.mintlify.injectFault('createJob', { status: 429, retryAfter: '3600' });
    await h.command('Document the import flag', {
      user_id: 'U0BEA',
      channel_id: 'C0DOCS',
      response_url: h.slack.responseUrl('limited'),
    });
    const limited = await h.slack.waitForCall('response_url', (call) => call.responseId === 'limited');
    expect(String(limited.args.text)).toContain('Try again in 60 minutes');

    // The first start's answer arrives now: that use was taken before the refusal, and says
    // nothing of the hour after it.
    answer.release();
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();

    const openedAt = Date.now();
    await h.event({
      type: 'app_home_opened',
      user: 'U0BEA',
      channel: 'D0HOME',
      tab: 'home',
      event_ts: '1800000000.000100',
    });
    const home = shown(
      await h.slack.waitForCall(
        'views.publish',
        (call) => call.args.user_id === 'U0BEA' && call.at >= openedAt,
      ),
    );
    // Mintlify said to come back in an hour: the Home tab should not offer 99 uses meanwhile.
    expect(home).toContain('0 of 100 agent uses');
  });
});
