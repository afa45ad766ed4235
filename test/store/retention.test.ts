import { createClient, type RedisClientType } from '@keyv/redis';
import { dmEvent } from '../support/slackRequests.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FAST_POLL, record, startFollowedJob, textOf, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type JobRecord, JobRecords } from '../../src/jobs/jobRecord.js';
import { openMemoryStore } from '../../src/store/store.js';
import { TEST_REDIS_URL } from '../support/redis.js';

const DAY_MS = 24 * 3_600_000;
const PR = 'https://github.com/acme/docs/pull/90';
const BOT_USER = 'U0BOT';

let nextTs = 1_850_000_000;
/** A person's reply in a thread the bot started (Slack names the parent's author). */
const replyUnder = (channel: string, threadTs: string, text: string) => {
  nextTs += 1;
  return {
    type: 'message',
    channel,
    channel_type: 'channel',
    user: 'U0READER',
    text,
    ts: `${nextTs}.000100`,
    thread_ts: threadTs,
    parent_user_id: BOT_USER,
  };
};

/** What Redis holds about a finished job, read as an operator would: key names and their TTLs. */
describe('what a job leaves in Redis', () => {
  let h: BotHarness;
  let redis: RedisClientType;
  let namespace: string;

  beforeAll(async () => {
    h = await startBot({ env: { ...FAST_POLL, JOB_RETENTION_DAYS: '2' } });
    namespace = h.config.store.namespace;
    redis = createClient({ url: TEST_REDIS_URL }) as RedisClientType;
    await redis.connect();
  });
  afterAll(async () => {
    await h?.close(); // drops the bot's namespace
    await redis?.quit();
  });

  const keysNaming = async (...parts: string[]) => {
    const found: Array<{ key: string; ttlMs: number }> = [];
    for await (const keys of redis.scanIterator({ MATCH: `${namespace}:*`, COUNT: 1_000 })) {
      for (const key of keys) {
        if (parts.some((part) => key.includes(part))) found.push({ key, ttlMs: await redis.pTTL(key) });
      }
    }
    return found;
  };

  it('gives every key that names a finished job or its card a time to live, under one namespace', async () => {
    const job = await startFollowedJob(h, 'Document the retention settings');
    // A reply in the thread while it runs: its dedupe mark and follow-up note name the thread too.
    await h.event(replyUnder(job.channel, job.cardTs, 'Mention the default as well'));
    await h.slack.waitForCall('reactions.add');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await expect.poll(async () => (await record(h, job.jobId))?.announced).toEqual(['0:completed']);
    await h.bot.drained();
    await expect.poll(async () => h.bot.following()).toBe(0);

    const keys = await keysNaming(job.jobId, job.cardTs);
    // The record and the thread lookup at least (marks about replies name the reply, and expire within a day).
    expect(keys.map(({ key }) => key)).toEqual(
      expect.arrayContaining([
        `${namespace}:job:${job.jobId}`,
        `${namespace}:thread:${job.channel}:${job.cardTs}`,
      ]),
    );
    for (const { key, ttlMs } of keys) {
      expect({ key, expires: ttlMs > 0 }).toEqual({ key, expires: true });
      expect(ttlMs).toBeLessThanOrEqual(2 * DAY_MS);
    }
    const recordKey = keys.find(({ key }) => key === `${namespace}:job:${job.jobId}`);
    expect(recordKey?.ttlMs).toBeGreaterThan(2 * DAY_MS - 60_000);
    // The channel's and the person's lists of jobs expire too (they name the job as a member).
    for (const list of [`${namespace}:jobs:channel:${job.channel}`, `${namespace}:jobs:user:U0USER`]) {
      expect(await redis.pTTL(list)).toBeGreaterThan(2 * DAY_MS - 60_000);
    }
    // One namespace: nothing under `<namespace>::<namespace>:`.
    const doubled: string[] = [];
    for await (const found of redis.scanIterator({ MATCH: `${namespace}::*`, COUNT: 1_000 }))
      doubled.push(...found);
    expect(doubled).toEqual([]);
  });

  it('keeps its mark of a reply sent to the job for longer than Slack retries an event (about an hour)', async () => {
    const job = await startFollowedJob(h, 'Document the dedupe window');
    const reply = replyUnder(job.channel, job.cardTs, 'Add the window length');
    await h.event(reply);
    await h.slack.waitForCall('reactions.add', (call) => call.args.timestamp === reply.ts);
    const marks = await keysNaming(`${job.channel}:${reply.ts}`);
    expect(marks).not.toEqual([]);
    for (const { key, ttlMs } of marks) {
      expect({ key, outlivesRetries: ttlMs > 3_600_000 }).toEqual({ key, outlivesRetries: true });
    }
  });

  it('starts the count again on a reply in the thread, and tells the author of a reply once the job is forgotten', async () => {
    const job = await startFollowedJob(h, 'Document the key layout');
    const sentBefore = h.mintlify.requestsFor('sendMessage').length;
    const recordKey = `${namespace}:job:${job.jobId}`;
    const threadKey = `${namespace}:thread:${job.channel}:${job.cardTs}`;
    // Most of the retention has passed.
    await redis.pExpire(recordKey, 60_000);
    await h.event(replyUnder(job.channel, job.cardTs, 'Also the namespace'));
    await expect.poll(() => redis.pTTL(recordKey)).toBeGreaterThan(2 * DAY_MS - 60_000);
    expect(await redis.pTTL(threadKey)).toBeGreaterThan(2 * DAY_MS - 60_000);
    await h.slack.waitForCall('reactions.add', (call) => call.args.channel === job.channel);

    // Its retention runs out (Redis drops both keys).
    await redis.del([recordKey, threadKey]);
    // An aside between people there gets no answer (nor does a mere mention of someone).
    await h.event(replyUnder(job.channel, job.cardTs, '// Bea, is this still open?'));
    await h.event(replyUnder(job.channel, job.cardTs, '<@U0BEA>'));
    const late = replyUnder(job.channel, job.cardTs, 'One more thing');
    await h.event(late, { eventId: 'EvLATE' });
    // Slack delivers it again: the author is still told once.
    await h.event(late, { eventId: 'EvLATE', retryNum: 1, retryReason: 'http_timeout' });
    const told = await h.slack.waitForCall(
      'chat.postEphemeral',
      (call) => call.args.thread_ts === job.cardTs && call.args.user === 'U0READER',
    );
    expect(textOf(told)).toContain('more than 2 days old');
    expect(textOf(told)).toContain('/docs-agent');
    await h.bot.drained();
    expect(
      h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.thread_ts === job.cardTs),
    ).toHaveLength(1);
    // Only the reply before the job was forgotten reached it.
    expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(sentBefore + 1);
    expect(threadReplies(h, job)).toHaveLength(0);

    // A reply in a thread the bot did not start (nor a job card's) is none of its business.
    await h.event({ ...replyUnder(job.channel, '1700000000.000100', 'hello'), parent_user_id: 'U0OTHER' });
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
  });

  it('tells the author of a reply under a card that went to their DM, once its job is forgotten, rather than start a job of the reply', async () => {
    // The bot cannot post in the channel: the card goes to the requester's DM, at its top level.
    h.slack.setBotMember('C0SHUT', false);
    await h.command('Document the DM layout', { channel_id: 'C0SHUT' });
    const card = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.response.ok === true && textOf(call).includes('Document the DM layout'),
    );
    const dm = String(card.response.channel);
    const cardTs = String(card.response.ts);
    const job = await vi.waitFor(async () => {
      const found = await h.bot.context.jobs.records.byThread(dm, cardTs);
      if (!found) throw new Error('not on the record yet');
      return found;
    });
    await h.bot.drained();
    const created = h.mintlify.requestsFor('createJob').length;
    // Its retention runs out (Redis drops both keys).
    await redis.del([`${namespace}:job:${job.jobId}`, `${namespace}:thread:${dm}:${cardTs}`]);

    // Slack takes its usual moment to give the thread's first message (the card, and its mark).
    h.slack.failNext('conversations.replies', { delayMs: 300, channel: dm });
    const said = h.slack.seedMessage(dm, { user: 'U0USER', text: 'Also the CSV one', thread_ts: cardTs });
    await h.event({
      type: 'message',
      channel: dm,
      channel_type: 'im',
      user: 'U0USER',
      text: said.text,
      ts: said.ts,
      thread_ts: cardTs,
      parent_user_id: BOT_USER,
    });
    await h.bot.drained();
    // No job of “Also the CSV one” alone (the thread before it is the bot's own) is started...
    expect.soft(h.mintlify.requestsFor('createJob')).toHaveLength(created);
    // ...and, as under a card in a channel, the author is told the job is too old to steer.
    expect(
      h.slack
        .callsTo('chat.postMessage')
        .filter((call) => call.args.thread_ts === cardTs && textOf(call).includes('more than 2 days old')),
    ).toHaveLength(1);
    // In the DM's words: a message to the bot there starts a job, and nobody mentions it.
    const told = h.slack
      .callsTo('chat.postMessage')
      .find((call) => textOf(call).includes('more than 2 days old'));
    expect(textOf(told!)).toContain('send me a message outside this thread');
    expect(textOf(told!)).not.toContain('mention me');
  });

  it('takes a reply in the thread of a job asked for in the DM, once the job is forgotten, as a message to the bot: a new job, with the thread so far', async () => {
    const dm = 'D0READER';
    const asked = h.slack.seedMessage(dm, { user: 'U0READER', text: 'Document the DM door' });
    await h.event(dmEvent(dm, asked));
    // Its card is the reply under the person's message.
    const job = await vi.waitFor(async () => {
      const found = await h.bot.context.jobs.records.byThread(dm, asked.ts);
      if (!found) throw new Error('not on the record yet');
      return found;
    });
    await h.bot.drained();
    const created = h.mintlify.requestsFor('createJob').length;
    await redis.del([`${namespace}:job:${job.jobId}`, `${namespace}:thread:${dm}:${asked.ts}`]);

    const said = h.slack.seedMessage(dm, { user: 'U0READER', text: 'Also the CSV one', thread_ts: asked.ts });
    await h.event({
      type: 'message',
      channel: dm,
      channel_type: 'im',
      user: 'U0READER',
      text: said.text,
      ts: said.ts,
      thread_ts: asked.ts,
      parent_user_id: 'U0READER',
    });
    // The person's first message is the thread so far: the new job has it, and its card is in that thread.
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(created + 1);
    const { prompt } = h.mintlify.requestsFor('createJob').at(-1)!.body as { prompt: string };
    expect(prompt).toMatch(/^Also the CSV one\n/);
    expect(prompt).toContain('Document the DM door');
    await expect.poll(async () => (await h.bot.context.jobs.records.byThread(dm, asked.ts))?.door).toBe('dm');
    await h.bot.drained();
    expect(
      h.slack.callsTo('chat.postMessage').filter((call) => textOf(call).includes('more than 2 days old')),
    ).toHaveLength(1);
  });

  it('tells the author of a reply also sent to the channel once the job is forgotten, as a plain reply’s', async () => {
    const job = await startFollowedJob(h, 'Document the broadcast layout');
    await redis.del([`${namespace}:job:${job.jobId}`, `${namespace}:thread:${job.channel}:${job.cardTs}`]);
    // "Also send to #channel": Slack sends it as thread_broadcast, naming the thread's parent in
    // `root` (the card, the bot's) rather than in parent_user_id.
    const { parent_user_id: _parent, ...plain } = replyUnder(
      job.channel,
      job.cardTs,
      'One more thing, everyone',
    );
    await h.event({
      ...plain,
      subtype: 'thread_broadcast',
      root: {
        type: 'message',
        user: BOT_USER,
        bot_id: 'B0BOT',
        text: 'Docs agent job',
        ts: job.cardTs,
        thread_ts: job.cardTs,
      },
    });
    const told = await h.slack.waitForCall(
      'chat.postEphemeral',
      (call) => call.args.thread_ts === job.cardTs && call.args.user === 'U0READER',
    );
    expect(textOf(told)).toContain('more than 2 days old');
  });
});

describe('a reply from someone the allowlist leaves out', () => {
  it('is refused, and does not start the job’s retention again', async () => {
    const h = await startBot({ env: { ...FAST_POLL, JOB_RETENTION_DAYS: '2', ALLOWED_USER_IDS: 'U0USER' } });
    const redis = createClient({ url: TEST_REDIS_URL }) as RedisClientType;
    await redis.connect();
    try {
      const job = await startFollowedJob(h, 'Document the key layout');
      const recordKey = `${h.config.store.namespace}:job:${job.jobId}`;
      await redis.pExpire(recordKey, 60_000);
      await h.event(replyUnder(job.channel, job.cardTs, 'Also the namespace'));
      const refused = await h.slack.waitForCall(
        'chat.postEphemeral',
        (call) => call.args.user === 'U0READER',
      );
      expect(textOf(refused)).toContain('only available');
      await h.bot.drained();
      expect(await redis.pTTL(recordKey)).toBeLessThanOrEqual(60_000);
      expect(h.mintlify.requestsFor('sendMessage')).toEqual([]);
    } finally {
      await redis.quit();
      await h.close();
    }
  });
});

describe("a person's recent jobs", () => {
  it('fill the list when the newest have expired and older ones, active since, have not', async () => {
    const store = openMemoryStore('recent-jobs');
    const records = new JobRecords(store);
    const created = (day: number) => `2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`;
    const job = (day: number): JobRecord => ({
      jobId: `job-${day}`,
      projectId: 'proj',
      channel: 'C0DOCS',
      threadTs: `17000000${day}.000100`,
      cardTs: `17000000${day}.000100`,
      requestedBy: 'U0ADA',
      prompt: `Document change ${day}`,
      door: 'command',
      status: 'completed',
      prLink: null,
      repository: null,
      ref: null,
      model: null,
      createdAt: created(day),
      updatedAt: created(day),
      finishedAt: created(day),
      round: 0,
      announced: [],
    });
    for (let day = 1; day <= 20; day++) await records.save(job(day));
    // The newest twelve expired (no activity for the retention); the older ones were replied to since.
    for (let day = 9; day <= 20; day++) await store.kv.delete(`job:job-${day}`);

    const listed = await records.recentForUser('U0ADA', 5);
    expect(listed.map((record) => record.jobId)).toEqual(['job-8', 'job-7', 'job-6', 'job-5', 'job-4']);
    await store.close();
  });
});
