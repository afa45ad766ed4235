import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { visitorsRows as rows } from '../support/visitors.js';

const CHANNEL = 'C0DIGEST';
const WEEKLY = { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'Europe/Paris' };

let h: BotHarness;
afterEach(async () => h?.close());

describe('/docs-agent digest in the digest channel just after the scheduled digest', () => {
  it('points at the scheduled digest of the same week rather than post the same digest twice', async () => {
    // Monday 23 Nov 2026, 11:00 in Paris: the 09:00 digest (16–22 Nov) is in the channel.
    const now = () => new Date('2026-11-23T10:00:00Z');
    h = await startBot({ env: WEEKLY, now });
    h.mintlify.setVisitors(rows(3));
    const scheduled = await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(scheduled.args.text).toContain('16–22 Nov 2026');
    await expect.poll(() => h.logs.some((line) => /posted the catch-up digest/.test(line))).toBe(true);

    // Someone in the channel asks for "the digest" ten minutes later: the very same week.
    await h.command('digest', { channel_id: CHANNEL, response_url: h.slack.responseUrl('asked') });
    await h.bot.drained();
    const posts = h.slack
      .callsTo('chat.postMessage')
      .filter((call) => call.args.channel === CHANNEL && call.response.ok === true);
    expect(posts.map((call) => call.args.text)).toHaveLength(1);
    // The person is shown the scheduled digest instead, as for a digest asked for twice.
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'asked');
    const link = `https://slack.com/archives/${CHANNEL}/p${String(scheduled.response.ts).replace('.', '')}`;
    expect(answer.args.text).toContain(`<${link}|see it>`);
  });

  it('posts it when the scheduled digest of the week was deleted from the channel', async () => {
    const now = () => new Date('2026-11-23T10:00:00Z');
    h = await startBot({ env: WEEKLY, now });
    h.mintlify.setVisitors(rows(3));
    const scheduled = await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    await expect.poll(() => h.logs.some((line) => /posted the catch-up digest/.test(line))).toBe(true);
    h.slack.deleteMessage(CHANNEL, String(scheduled.response.ts));

    await h.command('digest', { channel_id: CHANNEL, response_url: h.slack.responseUrl('asked') });
    await h.bot.drained();
    const posts = h.slack
      .callsTo('chat.postMessage')
      .filter((call) => call.args.channel === CHANNEL && call.response.ok === true);
    expect(posts).toHaveLength(2);
  });
});
