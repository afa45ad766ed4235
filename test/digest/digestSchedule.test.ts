import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { DigestRecords } from '../../src/digest/digestRecords.js';
import { periodKey, periodOfRun } from '../../src/digest/period.js';
import { scheduledDigestLease } from '../../src/digest/postDigest.js';
import { previousScheduledRun } from '../../src/queue/cron.js';
import { BOT_SCOPES } from '../../src/slack/slackIdentity.js';
import { tryLease } from '../../src/store/lease.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { redisKeys, TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const CHANNEL = 'C0DIGEST';
// Monday 09:00 in Paris: at any moment the test runs, its latest run is in the past.
const WEEKLY = { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'Europe/Paris' };

const harnesses: BotHarness[] = [];
const shared: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await Promise.all(shared.splice(0).map((fake) => fake.close()));
});

async function fakes(): Promise<{ slack: SlackFake; mintlify: MintlifyFake; namespace: string }> {
  const slack = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  shared.push(slack, mintlify);
  mintlify.setVisitors([
    { path: '/quickstart', human: 40, ai: 12, total: 50 },
    { path: '/changelog', human: 3, ai: 0, total: 3 },
  ]);
  return { slack, mintlify, namespace: uniqueNamespace('digest') };
}

async function bot(options: Parameters<typeof startBot>[0]): Promise<BotHarness> {
  const h = await startBot(options);
  harnesses.push(h);
  return h;
}

/** Waits until a log line matches: the schedule works in the background, after start. */
async function logged(h: BotHarness, pattern: RegExp): Promise<string> {
  await expect.poll(() => h.logs.some((line) => pattern.test(line)), { timeout: 15_000 }).toBe(true);
  return h.logs.find((line) => pattern.test(line)) as string;
}

/** The digest queue's job schedulers in Redis (BullMQ keeps them under `<prefix>:digest:repeat`). */
const schedulers = (namespace: string) => redisKeys(`${namespace}:digest:repeat*`);

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

const missedPeriod = () =>
  periodOfRun(
    previousScheduledRun(WEEKLY.DIGEST_CRON, WEEKLY.DIGEST_TIMEZONE, new Date()) as Date,
    WEEKLY.DIGEST_TIMEZONE,
  );

/** The catch-up digest posted, then its record lost: as if the bot had died between Slack's answer and writing it. */
async function postedThenRecordLost() {
  const world = await fakes();
  const { slack, mintlify, namespace } = world;
  const first = await bot({ env: WEEKLY, slack, mintlify, namespace });
  const post = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
  await logged(first, /posted the catch-up digest/);
  await first.stopBot();
  const period = missedPeriod();
  const lost = await startBot({ env: {}, slack, mintlify, namespace }); // no DIGEST_CHANNEL: posts nothing
  // Neither record of the post written: the run died right after posting.
  await lost.bot.store.kv.delete(`digest-posted:${CHANNEL}:${periodKey(period)}`);
  await lost.bot.store.kv.delete(`digest-last-posted:${CHANNEL}`);
  await lost.stopBot();
  return { ...world, post, period };
}

describe('the weekly digest schedule', () => {
  it('posts the digest missed while the bot was down, once, and not again after a restart', async () => {
    const { slack, mintlify, namespace } = await fakes();
    const first = await bot({ env: WEEKLY, slack, mintlify, namespace });

    const post = await slack.waitForCall('chat.postMessage');
    expect(post.args.channel).toBe(CHANNEL);
    expect(post.response.ok).toBe(true);
    expect(post.args.text).toContain('(Europe/Paris): 53 visitors');
    const period = missedPeriod();
    expect(mintlify.requestsFor('visitors')[0]?.query).toEqual({
      dateFrom: period.dateFrom,
      dateTo: period.dateTo,
      limit: '250',
      offset: '0',
    });
    await logged(first, /posted the catch-up digest for .*missed while the bot was down/);
    expect(await new DigestRecords(first.bot.store).posted(period, CHANNEL)).toMatchObject({
      ts: post.response.ts,
    });
    await first.stopBot();

    // The restarted bot sees the record: it queues no catch-up at all.
    const restarted = await bot({ env: WEEKLY, slack, mintlify, namespace });
    await logged(restarted, /weekly digest scheduled/);
    await restarted.bot.drained();
    expect(await catchUpsQueued(restarted, namespace)).toEqual([]);
    expect(restarted.logs.some((line) => line.includes('catch-up digest'))).toBe(false);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('after an upgrade, a yearly digest already posted is not posted again', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // On 1 January: the catch-up looks back up to a year for its latest run.
    const yearly = { ...WEEKLY, DIGEST_CRON: '0 9 1 1 *' };
    const period = periodOfRun(
      previousScheduledRun(yearly.DIGEST_CRON, yearly.DIGEST_TIMEZONE, new Date()) as Date,
      yearly.DIGEST_TIMEZONE,
    );
    const key = `${namespace}:digest-posted:${CHANNEL}:${periodKey(period)}`;
    const seeding = await startBot({ env: {}, slack, mintlify, namespace }); // no DIGEST_CHANNEL: posts nothing
    const posted = {
      channel: CHANNEL,
      ...period,
      ts: '1800000000.000100',
      postedAt: new Date().toISOString(),
    };
    // As versions before the upgrade wrote it: kept 92 days.
    await seeding.bot.store.kv.set(`digest-posted:${CHANNEL}:${periodKey(period)}`, posted, 92 * 86_400_000);
    await seeding.stopBot();

    const h = await bot({ env: yearly, slack, mintlify, namespace });
    await logged(h, /weekly digest scheduled/);
    // The record's life stands in for running past 92 days (Redis expires keys on its own clock, which
    // the bot's injected clock does not move): gone at 92 days, the year's catch-up would post it again.
    await expect.poll(() => h.bot.store.redis!.pTTL(key)).toBeGreaterThan(367 * 86_400_000);
    await h.bot.drained();
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('takes no other app’s message for its own earlier post, however alike its metadata', async () => {
    const { slack, mintlify, namespace } = await fakes();
    slack.seedMessage(CHANNEL, {
      user: 'U0OTHERAPP',
      bot_id: 'B0OTHER',
      text: 'Not the digest',
      metadata: {
        event_type: 'docs_agent_digest',
        event_payload: { period: periodKey(missedPeriod()), channel: CHANNEL },
      },
    });
    const h = await bot({ env: WEEKLY, slack, mintlify, namespace });
    await logged(h, /posted the catch-up digest/);
    const posted = slack.callsTo('chat.postMessage').filter((call) => call.response.ok);
    expect(posted.map((call) => call.args.channel)).toEqual([CHANNEL]);
  });

  it('finds a digest posted just before a crash that lost its record, and does not post it again', async () => {
    const { slack, mintlify, namespace, post, period } = await postedThenRecordLost();
    expect(post.args.metadata).toMatchObject({ event_type: 'docs_agent_digest' });

    const restarted = await bot({ env: WEEKLY, slack, mintlify, namespace });
    await logged(restarted, /catch-up digest for .*: already posted/);
    expect(slack.callsTo('chat.postMessage').filter((call) => call.args.channel === CHANNEL)).toHaveLength(1);
    expect(await new DigestRecords(restarted.bot.store).posted(period, CHANNEL)).toMatchObject({
      ts: post.response.ts,
    });
  });

  it('does not post it again when it cannot look for an earlier post: that try fails, and the next finds it', async () => {
    const { slack, mintlify, namespace } = await postedThenRecordLost();

    // The channel's history cannot be read at first (Slack failing past the client's retries).
    slack.failNext('conversations.history', { status: 500 }, 3);
    const restarted = await bot({
      env: WEEKLY,
      slack,
      mintlify,
      namespace,
      digestTries: { attempts: 2, backoffMs: 50 },
    });
    await logged(restarted, /could not check whether it was posted already/);
    await logged(restarted, /catch-up digest for .*: already posted/);
    expect(slack.callsTo('chat.postMessage').filter((call) => call.args.channel === CHANNEL)).toHaveLength(1);
  });

  it('a digest someone asked for in the channel over an hour before does not stand in for the scheduled one: that is still posted', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Monday 11:00 in Paris, after the 09:00 run: `/docs-agent digest` covers the same week as that run.
    let now = () => new Date('2026-11-23T10:00:00Z');
    const period = periodOfRun(
      previousScheduledRun(WEEKLY.DIGEST_CRON, WEEKLY.DIGEST_TIMEZONE, now())!,
      'Europe/Paris',
    );
    expect(periodOfRun(now(), 'Europe/Paris')).toEqual(period);
    const asker = await bot({ env: { DIGEST_TIMEZONE: 'Europe/Paris' }, slack, mintlify, namespace, now });
    await asker.command('digest', { channel_id: CHANNEL });
    await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    await asker.bot.drained();
    await asker.stopBot();

    // The bot with the schedule starts two hours later: the week's scheduled digest was never posted.
    now = () => new Date('2026-11-23T12:00:00Z');
    const h = await bot({ env: WEEKLY, slack, mintlify, namespace, now });
    await logged(h, new RegExp(`posted the catch-up digest for ${periodKey(period)}`));
    expect(slack.callsTo('chat.postMessage').filter((call) => call.args.channel === CHANNEL)).toHaveLength(2);
  });

  it('two instances on the same Redis post it once', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Slow answers keep the first instance busy while the second one starts.
    mintlify.injectFault('visitors', { delayMs: 300 }, 2);

    const [a, b] = await Promise.all([
      bot({ env: WEEKLY, slack, mintlify, namespace }),
      bot({ env: WEEKLY, slack, mintlify, namespace }),
    ]);
    // One catch-up job for both (named after the period): one of them takes it and posts.
    await expect
      .poll(() => [...a.logs, ...b.logs].some((line) => line.includes('missed while the bot was down')))
      .toBe(true);
    await Promise.all([a.bot.drained(), b.bot.drained()]);

    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(
      [...a.logs, ...b.logs].filter((line) => line.includes('missed while the bot was down')),
    ).toHaveLength(1);
  });

  it('queues no catch-up for a week another worker is gathering, and catches up once that worker is gone', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Another worker gathering the week's digest (through an hour of analytics waits, say) holds its lease.
    // (A web process here, only to reach Redis: a worker would take jobs of the digest queue too.)
    const other = await bot({ env: { SERVICES: 'web' }, slack, mintlify, namespace });
    const lease = `lease:digest:${CHANNEL}:${periodKey(missedPeriod())}`;
    expect(await other.bot.store.atomic.setIfAbsent(lease, 'the other worker', 60_000)).toBe(true);

    const starting = await bot({ env: WEEKLY, slack, mintlify, namespace });
    await logged(starting, /weekly digest scheduled/);
    expect(await catchUpsQueued(starting, namespace)).toEqual([]);
    await starting.stopBot();

    // That worker died without posting it: its lease lapses, and the next start (or check) catches up.
    await other.bot.store.atomic.deleteIfValue(lease, 'the other worker');
    const next = await bot({ env: WEEKLY, slack, mintlify, namespace });
    await logged(next, /posted the catch-up digest/);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('a worker without the digest settings warns when another one keeps putting its schedule back', async () => {
    const { slack, mintlify, namespace } = await fakes();
    const configured = await bot({ env: WEEKLY, slack, mintlify, namespace, reconcileEveryMs: 100 });
    await logged(configured, /posted the catch-up digest/);
    // Its start removes the schedule without a word (that is how the digest is turned off); its
    // checks find it back, put there by the other.
    const unconfigured = await bot({ env: {}, slack, mintlify, namespace, reconcileEveryMs: 100 });
    await logged(
      unconfigured,
      /WARN .*removed the weekly digest's schedule: this process has no weekly digest \(DIGEST_CHANNEL unset, or DIGEST_CRON=off\) while another one schedules it: give every process with the worker role the same DIGEST_\* variables/,
    );
  });

  it('a worker that takes up occurrences older than the latest posts only the latest week: the stale ones are skipped', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // The bot's clock is 8 days ahead of the queue's: each occurrence it takes up is long past for it.
    const DAY_MS = 24 * 3_600_000;
    const skewMs = 8 * DAY_MS;
    const h = await bot({
      env: { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '* * * * * *', DIGEST_TIMEZONE: 'UTC' },
      slack,
      mintlify,
      namespace,
      now: () => new Date(Date.now() + skewMs),
    });
    // Occurrences taken up (two or more, each after the catch-up of the latest week).
    const occurrences = /skipped the digest of an occurrence long past|scheduled digest for/;
    await expect
      .poll(() => h.logs.filter((line) => occurrences.test(line)).length, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(2);
    await h.bot.drained();
    const latest = periodOfRun(new Date(Date.now() + skewMs), 'UTC');
    const posts = slack.callsTo('chat.postMessage').filter((call) => call.response.ok === true);
    expect(posts).toHaveLength(1);
    expect(h.logs.some((line) => /skipped the digest of an occurrence long past/.test(line))).toBe(true);
    expect(mintlify.requestsFor('visitors').map((request) => request.query?.dateTo)).not.toContain(
      periodOfRun(new Date(), 'UTC').dateTo,
    );
    expect(mintlify.requestsFor('visitors')[0]?.query).toMatchObject({ dateTo: latest.dateTo });
  });

  it('an occurrence taken up a day late covers the week before the occurrence, not before the day it ran', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // A yearly occurrence 8 s from now (the bot starts well before), taken up by a worker whose clock is a day ahead.
    const at = new Date(Math.ceil((Date.now() + 8_000) / 1000) * 1000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    const h = await bot({
      env: { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: cron, DIGEST_TIMEZONE: 'UTC' },
      slack,
      mintlify,
      namespace,
      now: () => new Date(Date.now() + 24 * 3_600_000),
    });
    const period = periodOfRun(at, 'UTC');
    // Its week was caught up at the start; the occurrence itself finds it posted.
    const posts = () => slack.callsTo('chat.postMessage').filter((call) => call.response.ok === true);
    const ran = () => h.logs.find((line) => line.includes('scheduled digest for '));
    // The occurrence has run: it found its week posted (a line), or posted a digest (none).
    await expect.poll(() => ran() !== undefined || posts().length > 1, { timeout: 15_000 }).toBe(true);
    await h.bot.drained();
    expect(posts()).toHaveLength(1);
    expect(ran()).toContain(`scheduled digest for ${periodKey(period)}: already posted`);
  });

  it('runs on DIGEST_CRON and posts each period once however often it fires', async () => {
    const { slack, mintlify, namespace } = await fakes();
    const h = await bot({
      env: { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '* * * * * *', DIGEST_TIMEZONE: 'Asia/Tokyo' },
      slack,
      mintlify,
      namespace,
    });

    await logged(h, /scheduled digest for .*: already posted/);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    const period = periodOfRun(new Date(), 'Asia/Tokyo');
    expect(mintlify.requestsFor('visitors')[0]?.query).toMatchObject({
      dateFrom: period.dateFrom,
      dateTo: period.dateTo,
    });
  });

  it.each([
    ['DIGEST_CHANNEL is not set', { DIGEST_CRON: '* * * * * *' }],
    // Another channel: without DIGEST_CRON=off, its week's catch-up would be posted at once.
    ['DIGEST_CRON=off', { ...WEEKLY, DIGEST_CHANNEL: 'C0OTHER', DIGEST_CRON: 'off' }],
  ])(
    'posts nothing on a schedule when %s, and removes the schedule an earlier start made',
    async (_why, env) => {
      const { slack, mintlify, namespace } = await fakes();
      const scheduled = await bot({
        env: { ...WEEKLY, DIGEST_CRON: '* * * * * *' },
        slack,
        mintlify,
        namespace,
      });
      await logged(scheduled, /scheduled digest for .*: already posted/);
      await scheduled.stopBot();
      expect(await schedulers(namespace)).not.toEqual([]);
      const posted = slack.callsTo('chat.postMessage').length;
      const visitorReads = mintlify.requestsFor('visitors').length;

      const unscheduled = await bot({ env, slack, mintlify, namespace });
      await expect.poll(() => schedulers(namespace)).toEqual([]);
      await unscheduled.bot.drained();
      expect(await catchUpsQueued(unscheduled, namespace)).toEqual([]);
      expect(slack.callsTo('chat.postMessage')).toHaveLength(posted);
      expect(mintlify.requestsFor('visitors')).toHaveLength(visitorReads);
      if (env.DIGEST_CRON === 'off')
        await logged(unscheduled, /no weekly digest scheduled \(DIGEST_CRON=off\)/);
    },
  );

  it('queues a catch-up that failed for good again at the next check, and posts it once Slack takes it', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // The bot is not in the channel yet: both tries of the catch-up are refused, at the read for
    // an earlier post, before any post.
    slack.setBotMember(CHANNEL, false);
    const tries = { attempts: 2, backoffMs: 50, againAfterMs: 0 }; // the hour's wait, cut short
    const first = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    await logged(first, /job catch-up-C0DIGEST-.* failed for good/);
    expect(slack.callsTo('conversations.history').map((call) => call.response.error)).toEqual([
      'not_in_channel',
      'not_in_channel',
    ]);
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
    expect(
      first.logs.filter((line) => line.includes('not_in_channel: invite the bot to the channel')),
    ).toHaveLength(2);
    await first.stopBot();

    // Invited since: the next check (here, the restarted bot's first) queues the catch-up again.
    slack.setBotMember(CHANNEL, true);
    const restarted = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    await logged(restarted, /posted the catch-up digest/);
    const posted = slack.callsTo('chat.postMessage').filter((call) => call.response.ok);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.args.channel).toBe(CHANNEL);
  });

  it('a private DIGEST_CHANNEL the bot was not invited to (Slack answers channel_not_found) is told to invite the bot, not only to check the ID', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // What Slack answers the bot about a private channel it is not in: as if there were no such channel.
    slack.failNext('conversations.history', { error: 'channel_not_found' });
    const tries = { attempts: 1, backoffMs: 50 };
    const h = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    const said = await logged(h, /was not posted: could not check whether it was posted already/);
    expect(said).toContain('channel_not_found');
    expect(said).toContain('invite the bot to the channel');
    expect(said).toContain('DIGEST_CHANNEL');
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('a token without the history scopes (installed from an older manifest) is told at the digest as the scope Slack asks for, not chat:write', async () => {
    // The token lacks both history scopes: the digest cannot look for an earlier post of its week.
    const granted = BOT_SCOPES.filter((scope) => scope !== 'channels:history' && scope !== 'groups:history');
    const slack = await startSlackFake({ botToken: SECRETS.botToken, scopes: granted });
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    shared.push(slack, mintlify);
    const tries = { attempts: 1, backoffMs: 50 };
    const h = await bot({
      env: WEEKLY,
      slack,
      mintlify,
      namespace: uniqueNamespace('digest'),
      digestTries: tries,
    });
    const said = await logged(h, /was not posted: could not check whether it was posted already/);
    expect(slack.callsTo('conversations.history')[0]?.response.error).toBe('missing_scope');
    expect(said).toContain('missing_scope');
    expect(said).toContain('channels:history');
    expect(said).toContain('SLACK_BOT_TOKEN lacks the channels:history');
    expect(said).toContain('update the app from manifest.yml and reinstall it');
    expect(said).not.toContain('chat:write'); // the token has it: naming it sends the operator the wrong way
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('skips a catch-up queued for a week that is no longer the latest: only the latest week’s digest is posted', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // The first try of this week's catch-up is refused; its next try waits in the queue.
    slack.setBotMember(CHANNEL, false);
    const tries = { attempts: 3, backoffMs: 2_000 };
    const first = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    await logged(first, /not_in_channel: invite the bot to the channel/);
    await first.stopBot();

    // The next worker runs a week and more later (its clock 8 days ahead): that old catch-up is no news.
    slack.setBotMember(CHANNEL, true);
    const skewMs = 8 * 24 * 3_600_000;
    const later = await bot({
      env: WEEKLY,
      slack,
      mintlify,
      namespace,
      digestTries: tries,
      now: () => new Date(Date.now() + skewMs),
    });
    await logged(later, /posted the catch-up digest/);
    // Both catch-ups have run: the old one's next try too.
    await expect.poll(() => catchUpsQueued(later, namespace), { timeout: 15_000 }).toEqual([]);
    await later.bot.drained();
    const posted = slack.callsTo('chat.postMessage').filter((call) => call.response.ok === true);
    expect(posted).toHaveLength(1);
    expect(later.logs.some((line) => /skipped the catch-up digest of a week long past/.test(line))).toBe(
      true,
    );
    // The latest week's, not the one the old catch-up was queued for.
    const latest = periodOfRun(
      previousScheduledRun(WEEKLY.DIGEST_CRON, WEEKLY.DIGEST_TIMEZONE, new Date(Date.now() + skewMs)) as Date,
      WEEKLY.DIGEST_TIMEZONE,
    );
    expect(mintlify.requestsFor('visitors')[0]?.query).toMatchObject({ dateTo: latest.dateTo });
  });

  it('queues no catch-up for an hour after a failed try: a failure that lasts is not tried at every check', async () => {
    const { slack, mintlify, namespace } = await fakes();
    slack.setBotMember(CHANNEL, false);
    const tries = { attempts: 2, backoffMs: 50 }; // then the default hour
    const first = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    await logged(first, /job catch-up-C0DIGEST-.* failed for good/);
    await first.stopBot();

    const restarted = await bot({ env: WEEKLY, slack, mintlify, namespace, digestTries: tries });
    await logged(restarted, /weekly digest scheduled/); // logged once the catch-up was queued, or not
    expect(await new DigestRecords(restarted.bot.store).failedRecently(missedPeriod(), CHANNEL)).toBe(true);
    expect(await catchUpsQueued(restarted, namespace)).toEqual([]);
    expect(slack.callsTo('conversations.history')).toHaveLength(2);
  });

  it('logs a failed scheduled digest once, clearly, and posts nothing', async () => {
    const { slack, mintlify, namespace } = await fakes();
    mintlify.injectFault('visitors', { status: 403 }, 10);
    const h = await bot({ env: WEEKLY, slack, mintlify, namespace });

    const line = await logged(h, /was not posted/);
    expect(line).toMatch(/ERROR .*the digest for .* in C0DIGEST was not posted: .*403/);
    expect(line).not.toContain(SECRETS.mintlifyKey);
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
  });
});

const run = promisify(execFile);

/** `npm run digest`'s environment, as with an external scheduler: the workers' schedule is off. */
function digestOnceEnv(
  { slack, mintlify, namespace }: { slack: SlackFake; mintlify: MintlifyFake; namespace: string },
  timezone: string,
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ENV_FILE: 'none',
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    MINTLIFY_API_KEY: SECRETS.mintlifyKey,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: mintlify.url,
    REDIS_URL: TEST_REDIS_URL,
    STORE_NAMESPACE: namespace,
    DIGEST_CHANNEL: CHANNEL,
    DIGEST_TIMEZONE: timezone,
    DIGEST_CRON: 'off',
    LOG_LEVEL: 'info',
  };
}

describe('npm run digest', () => {
  it('posts one digest to DIGEST_CHANNEL and exits; a second run finds it already posted', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // A zone whose date is not UTC's right now, so the period is DIGEST_TIMEZONE's and no other.
    const zone = new Date().getUTCHours() < 10 ? 'Pacific/Pago_Pago' : 'Pacific/Kiritimati';
    const env = digestOnceEnv({ slack, mintlify, namespace }, zone);
    const once = () => run(process.execPath, ['--import', 'tsx', 'src/digestOnce.ts'], { env });

    const first = await once();
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(first.stderr).toMatch(/posted the digest for .* in C0DIGEST/);

    const second = await once();
    expect(second.stderr).toMatch(/was already posted to C0DIGEST/);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    const period = periodOfRun(new Date(), zone);
    expect(mintlify.requestsFor('visitors')[0]?.query).toMatchObject({
      dateFrom: period.dateFrom,
      dateTo: period.dateTo,
    });
  });

  it('exits with 1 when the digest could not be posted, and with 0 while another instance is posting it', async () => {
    const { slack, mintlify, namespace } = await fakes();
    const env = digestOnceEnv({ slack, mintlify, namespace }, 'America/New_York');
    const exitOf = (overrides: Record<string, string> = {}) =>
      run(process.execPath, ['--import', 'tsx', 'src/digestOnce.ts'], { env: { ...env, ...overrides } }).then(
        ({ stderr }) => ({ code: 0, stderr }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
      );

    // Mintlify refuses the key: an external scheduler must see the run fail.
    mintlify.injectFault('visitors', { status: 403 }, 50);
    const refused = await exitOf();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the digest for .* in C0DIGEST was not posted/);
    // A Slack token that no longer works fails too, saying why.
    const badToken = await exitOf({ SLACK_BOT_TOKEN: 'xoxb-revoked-token' });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toContain('npm run digest failed');
    mintlify.clearFaults();
    expect(slack.callsTo('chat.postMessage')).toEqual([]);

    // Redis out of reach: nothing is posted (it could not know whether the digest was), and it says why.
    const noRedis = await exitOf({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect(noRedis.code).toBe(1);
    expect(noRedis.stderr).toContain(
      'npm run digest cannot run: Redis at redis://127.0.0.1:1 did not answer',
    );
    expect(slack.callsTo('chat.postMessage')).toEqual([]);

    // Another instance holds the period's lease: this run is no failure, and posts nothing.
    const other = await bot({ env: {}, slack, mintlify, namespace });
    const period = periodOfRun(new Date(), 'America/New_York');
    const lease = await tryLease(other.bot.store.atomic, scheduledDigestLease(period, CHANNEL), 60_000);
    expect(lease).toBeDefined();
    const busy = await exitOf();
    expect(busy.code).toBe(0);
    expect(busy.stderr).toContain('is being posted by another instance right now');
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('exits with 1 and a clear line when DIGEST_CHANNEL is not set', async () => {
    const env = {
      ...process.env,
      ENV_FILE: 'none',
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      MINTLIFY_API_KEY: SECRETS.mintlifyKey,
      MINTLIFY_PROJECT_ID: PROJECT_ID,
      DIGEST_CHANNEL: '',
    };
    const failure = await run(process.execPath, ['--import', 'tsx', 'src/digestOnce.ts'], { env }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('DIGEST_CHANNEL is not set');
  });

  it('reads the file ENV_FILE names before the environment, and names a file that is not there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-env-'));
    const file = join(dir, 'staging.env');
    writeFileSync(file, 'DIGEST_CHANNEL=docs\n');
    const env = {
      ...process.env,
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      MINTLIFY_API_KEY: SECRETS.mintlifyKey,
      MINTLIFY_PROJECT_ID: PROJECT_ID,
      DIGEST_CHANNEL: undefined,
    };
    const failureWith = (envFile: string) =>
      run(process.execPath, ['--import', 'tsx', 'src/digestOnce.ts'], {
        env: { ...env, ENV_FILE: envFile },
      }).then(
        () => undefined,
        (error: { code?: number; stderr?: string }) => error,
      );
    try {
      const fromFile = await failureWith(file);
      expect(fromFile?.code).toBe(1);
      expect(fromFile?.stderr).toContain('DIGEST_CHANNEL must be a channel ID');
      const missing = await failureWith(join(dir, 'nowhere.env'));
      expect(missing?.stderr).toContain(`ENV_FILE names ${join(dir, 'nowhere.env')}, which is not a file`);
      expect((await failureWith(dir))?.stderr).toContain(`ENV_FILE names ${dir}, which is not a file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('an operator moving DIGEST_CRON to another day', () => {
  const FRIDAYS = { ...WEEKLY, DIGEST_CRON: '0 9 * * 5' };

  it('gets no digest of a stale week at the deploy: the bot was up and posted on the old day', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Wednesday 25 Nov 2026: Monday's digest (16–22 Nov) was posted at 09:00 on the 23rd.
    const now = () => new Date('2026-11-25T10:00:00Z');

    const monday = await bot({ env: WEEKLY, slack, mintlify, namespace, now });
    const first = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(first.args.text).toContain('16–22 Nov 2026');
    await monday.bot.drained();
    await monday.stopBot();

    // The operator moves the digest to Fridays and deploys on Wednesday: the next digest is due Friday.
    const friday = await bot({ env: FRIDAYS, slack, mintlify, namespace, now });
    await logged(friday, /weekly digest scheduled "0 9 \* \* 5"/);
    // No catch-up queued (one queued would sit in these lists until it has posted).
    expect(await catchUpsQueued(friday, namespace)).toEqual([]);
    const posts = slack.callsTo('chat.postMessage').filter((call) => call.response.ok === true);
    // Posted now: "Docs digest: 13–19 Nov 2026", a week that ended six days ago, four of its days
    // already in Monday's digest, logged as "missed while the bot was down".
    expect(posts.map((call) => call.args.text)).toHaveLength(1);
  });

  it('still gets the digest of a week the bot was down for, the week before posted', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Monday 16 Nov 2026: that week's digest (9–15 Nov) is posted; then the bot is down until Tuesday 24.
    let at = new Date('2026-11-16T10:00:00Z');
    const now = () => at;

    const before = await bot({ env: WEEKLY, slack, mintlify, namespace, now });
    const first = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(first.args.text).toContain('9–15 Nov 2026');
    await before.bot.drained();
    await before.stopBot();

    at = new Date('2026-11-24T10:00:00Z');
    await bot({ env: WEEKLY, slack, mintlify, namespace, now });
    const missed = await slack.waitForCall(
      'chat.postMessage',
      (call) => call.response.ok === true && String(call.args.text).includes('16–22 Nov 2026'),
    );
    expect(missed.args.channel).toBe(CHANNEL);
  });
});

describe('the weekly digest whose post lands but whose answer is lost', () => {
  it('is in the channel once: the post is not sent again blind', async () => {
    const { slack, mintlify, namespace } = await fakes();
    // Slack stores the digest, then its edge answers 503: the bot never hears it landed.
    slack.failNext('chat.postMessage', { status: 503, landed: true, channel: CHANNEL });
    const h = await bot({
      env: WEEKLY,
      slack,
      mintlify,
      namespace,
      // The try that met the 503 fails; the next one, soon after, looks for the post by its mark.
      digestTries: { attempts: 4, backoffMs: 50 },
    });
    await logged(h, /posted the catch-up digest|catch-up digest for .*: already posted/);

    const digests = slack
      .history(CHANNEL)
      .filter(
        (message) =>
          (message.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_digest',
      );
    expect(digests).toHaveLength(1);
  });
});
