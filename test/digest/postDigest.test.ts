import { afterEach, describe, expect, it } from 'vitest';
import { createDigestContext, type DigestContext } from '../../src/digest/digestContext.js';
import { periodKey, periodOfRun } from '../../src/digest/period.js';
import { postScheduledDigest } from '../../src/digest/postDigest.js';
import { MintlifyClient } from '../../src/mintlify/index.js';
import { USER_AGENT } from '../../src/version.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';
import { heldStep, watchLeases } from '../support/leases.js';
import { visitorsRows } from '../support/visitors.js';

const CHANNEL = 'C0DIGEST';
const period = periodOfRun(new Date('2026-01-05T09:00:00Z'), 'UTC');

let h: BotHarness;
let mintlify: MintlifyClient | undefined;
afterEach(async () => {
  await mintlify?.close();
  await h?.close();
});

/** The digest's context as the bot's worker builds it (worker.ts), on the harness's Slack client and store. */
function digestContext(harness: BotHarness): DigestContext {
  const { jobs } = harness.bot.context;
  mintlify = new MintlifyClient({
    apiKey: SECRETS.mintlifyKey,
    baseUrl: harness.mintlify.url,
    userAgent: USER_AGENT,
  });
  return createDigestContext({
    config: harness.config,
    mintlify,
    store: harness.bot.store,
    slack: jobs.slack,
    slackOnce: jobs.slackOnce,
    botId: jobs.botId,
    logger: jobs.logger,
    shutdown: new AbortController().signal,
  });
}

describe('a scheduled digest whose lease is lost while it is gathered', () => {
  it('is not posted by the worker that lost it, and the next try posts it once', async () => {
    h = await startBot();
    h.mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    const ctx = digestContext(h);
    const leases = watchLeases(h.bot.store, h.logs);
    // The analytics are slow to answer; meanwhile the lease lapses and another worker takes it.
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    const posting = postScheduledDigest(ctx, period, CHANNEL);
    await expect.poll(() => h.mintlify.requestsFor('visitors').length).toBe(1);
    const other = await leases.loseToAnother(`digest:${CHANNEL}:${periodKey(period)}`);
    read.release();
    expect(await posting).toEqual({ kind: 'in_progress', period });
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
    expect(await ctx.records.posted(period, CHANNEL)).toBeUndefined();

    // The other worker is done without posting it: the next try does, once.
    await other.release();
    expect(await postScheduledDigest(ctx, period, CHANNEL)).toMatchObject({ kind: 'posted' });
    const posts = h.slack.callsTo('chat.postMessage');
    expect(posts.map((call) => call.args.channel)).toEqual([CHANNEL]);
    expect(await ctx.records.posted(period, CHANNEL)).toMatchObject({ ts: posts[0]?.response.ts });
  });
});

describe('a scheduled digest whose record was lost after it was posted', () => {
  it('is found in the channel behind more than a page of newer messages, and not posted again', async () => {
    h = await startBot();
    h.mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    const ctx = digestContext(h);
    expect(await postScheduledDigest(ctx, period, CHANNEL)).toMatchObject({ kind: 'posted' });
    const [posted] = h.slack.callsTo('chat.postMessage');

    // Redis lost the record (an older backup restored), and the channel has moved on since.
    await h.bot.store.kv.delete(`digest-posted:${CHANNEL}:${periodKey(period)}`);
    for (let index = 0; index < 250; index++) {
      h.slack.seedMessage(CHANNEL, { user: 'U0ADA', text: `Message ${index}` });
    }
    await postScheduledDigest(ctx, period, CHANNEL);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(h.slack.callsTo('conversations.history').length).toBeGreaterThan(1);
    expect(await ctx.records.posted(period, CHANNEL)).toMatchObject({ ts: posted?.response.ts });
  });
});

describe('the scheduled digest and one asked for at the same time', () => {
  it('do not both read the same period’s visitors: they share the organization’s 100 analytics requests an hour', async () => {
    h = await startBot();
    h.mintlify.setVisitors(visitorsRows(600)); // 3 pages of 250
    const ctx = digestContext(h);
    // The week's scheduled digest is being gathered (its first page slow to come) ...
    const now = periodOfRun(new Date(), 'UTC');
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    const scheduled = postScheduledDigest(ctx, now, CHANNEL);
    await expect.poll(() => h.mintlify.requestsFor('visitors').length).toBe(1);
    // ... when someone types `/docs-agent digest` in another channel, for the same 7 days.
    await h.command('digest', { channel_id: 'C0OTHER', response_url: h.slack.responseUrl('asked') });
    // Answered (posted, or told to try again shortly) while the scheduled one still gathers.
    await h.bot.drained();
    read.release();
    expect(await scheduled).toMatchObject({ kind: 'posted' });
    // Each page of the period's export read once, whoever posts what.
    const firstPages = h.mintlify
      .requestsFor('visitors')
      .filter((request) => request.query.limit === '250' && request.query.offset === '0');
    expect(firstPages).toHaveLength(1);
  });

  it('the scheduled one waits its turn while the one asked for is read, then posts from what it read', async () => {
    h = await startBot();
    h.mintlify.setVisitors(visitorsRows(600));
    const ctx = digestContext(h);
    const now = periodOfRun(new Date(), 'UTC');
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    // Someone's `/docs-agent digest` is being gathered (its first page slow to come) ...
    await h.command('digest', { channel_id: 'C0OTHER', response_url: h.slack.responseUrl('asked') });
    await expect.poll(() => h.mintlify.requestsFor('visitors').length).toBe(1);
    // ... when the scheduled digest of the same 7 days comes up: it is looked at again later.
    expect(await postScheduledDigest(ctx, now, CHANNEL)).toMatchObject({ kind: 'waiting_turn' });
    read.release();
    await h.bot.drained();
    expect(await postScheduledDigest(ctx, now, CHANNEL)).toMatchObject({ kind: 'posted' });
    const firstPages = h.mintlify
      .requestsFor('visitors')
      .filter((request) => request.query.limit === '250' && request.query.offset === '0');
    expect(firstPages).toHaveLength(1);
  });
});

describe('the scheduled digest just after one asked for in its own channel', () => {
  it('does not post the same week a second time in the channel, minutes after the one asked for', async () => {
    h = await startBot();
    h.mintlify.setVisitors(visitorsRows(3));
    const ctx = digestContext(h);
    const now = periodOfRun(new Date(), 'UTC');
    // Someone types `/docs-agent digest` in the digest channel just before the schedule's time ...
    await h.command('digest', { channel_id: CHANNEL, response_url: h.slack.responseUrl('asked') });
    await h.bot.drained();
    await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.channel === CHANNEL && call.response.ok === true,
    );
    // ... and the scheduled digest of the same 7 days comes up (or had waited its turn behind it).
    await postScheduledDigest(ctx, now, CHANNEL);
    const posts = h.slack
      .callsTo('chat.postMessage')
      .filter((call) => call.args.channel === CHANNEL && call.response.ok === true);
    expect(posts.map((call) => call.args.text)).toHaveLength(1);
  });
});
