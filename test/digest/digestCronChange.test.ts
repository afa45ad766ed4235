import { afterEach, describe, expect, it } from 'vitest';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { startSlackFake } from '../fakes/slackFake.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { uniqueNamespace } from '../support/redis.js';

const CHANNEL = 'C0DIGEST';
const MONDAYS = { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'Europe/Paris' };
const FRIDAYS = { ...MONDAYS, DIGEST_CRON: '0 9 * * 5' };

const harnesses: BotHarness[] = [];
const shared: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await Promise.all(shared.splice(0).map((fake) => fake.close()));
});

/** The catch-ups in BullMQ's lists of the digest queue: waiting, running, delayed or failed. */
async function catchUpsQueued(h: BotHarness, namespace: string): Promise<string[]> {
  const redis = h.bot.store.redis!;
  const list = (name: string) => `${namespace}:digest:${name}`;
  const ids = [
    ...(await redis.lRange(list('wait'), 0, -1)),
    ...(await redis.lRange(list('active'), 0, -1)),
    ...(await redis.zRange(list('delayed'), 0, -1)),
    ...(await redis.zRange(list('failed'), 0, -1)),
  ];
  return ids.filter((id) => id.startsWith('catch-up-'));
}

describe('an operator moving DIGEST_CRON to another day', () => {
  it('gets no digest of a stale week at the deploy: the bot was up and posted on the old day', async () => {
    const slack = await startSlackFake({ botToken: SECRETS.botToken });
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    shared.push(slack, mintlify);
    mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    const namespace = uniqueNamespace('digest-cron-change');
    // Wednesday 25 Nov 2026: Monday's digest (16–22 Nov) was posted at 09:00 on the 23rd.
    const now = () => new Date('2026-11-25T10:00:00Z');

    const monday = await startBot({ env: MONDAYS, slack, mintlify, namespace, now });
    harnesses.push(monday);
    const first = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(first.args.text).toContain('16–22 Nov 2026');
    await monday.bot.drained();
    await monday.stopBot();

    // The operator moves the digest to Fridays and deploys on Wednesday: the next digest is due Friday.
    const friday = await startBot({ env: FRIDAYS, slack, mintlify, namespace, now });
    harnesses.push(friday);
    await expect
      .poll(() => friday.logs.some((line) => /weekly digest scheduled "0 9 \* \* 5"/.test(line)), {
        timeout: 15_000,
      })
      .toBe(true);
    // No catch-up queued (one queued would sit in these lists until it has posted).
    expect(await catchUpsQueued(friday, namespace)).toEqual([]);
    const posts = slack.callsTo('chat.postMessage').filter((call) => call.response.ok === true);
    // Posted now: "Docs digest: 13–19 Nov 2026", a week that ended six days ago, four of its days
    // already in Monday's digest, logged as "missed while the bot was down".
    expect(posts.map((call) => call.args.text)).toHaveLength(1);
  });

  it('still gets the digest of a week the bot was down for, the week before posted', async () => {
    const slack = await startSlackFake({ botToken: SECRETS.botToken });
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    shared.push(slack, mintlify);
    mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    const namespace = uniqueNamespace('digest-outage');
    // Monday 16 Nov 2026: that week's digest (9–15 Nov) is posted; then the bot is down until Tuesday 24.
    let at = new Date('2026-11-16T10:00:00Z');
    const now = () => at;

    const before = await startBot({ env: MONDAYS, slack, mintlify, namespace, now });
    harnesses.push(before);
    const first = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(first.args.text).toContain('9–15 Nov 2026');
    await before.bot.drained();
    await before.stopBot();

    at = new Date('2026-11-24T10:00:00Z');
    const after = await startBot({ env: MONDAYS, slack, mintlify, namespace, now });
    harnesses.push(after);
    const missed = await slack.waitForCall(
      'chat.postMessage',
      (call) => call.response.ok === true && String(call.args.text).includes('16–22 Nov 2026'),
    );
    expect(missed.args.channel).toBe(CHANNEL);
  });
});
