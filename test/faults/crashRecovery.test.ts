import { describe, type ExpectStatic, it, type TestContext } from 'vitest';
import { JobRecords } from '../../src/jobs/jobRecord.js';
import { createLogger } from '../../src/log.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import type { Store } from '../../src/store/store.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackCall, type SlackFake, type StoredMessage, startSlackFake } from '../fakes/slackFake.js';
import { FAST_POLL } from '../jobs/followSupport.js';
import { PROJECT_ID, SECRETS } from '../support/botHarness.js';
import { type BotProcess, botEnv, runBot } from '../support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';
import { messageChanged, sendEvent, sendSlashCommand } from '../support/slackRequests.js';
import { visitorsRows } from '../support/visitors.js';

/**
 * The bot is SIGKILLed at each step of a job's life, at a point the fakes make exact (a call
 * arrives and its answer is held back), then started again on the same Redis. Each job must be
 * followed to its end with exactly one card and one final reply, or its requester told that it
 * could not be started.
 */

const CHANNEL = 'C0CHANNEL';
const REQUESTER = 'U0USER';
const PR = 'https://github.com/acme/docs/pull/77';
// Longer than any test waits: a held-back answer never arrives before the kill.
const HELD_BACK_MS = 30_000;
// A killed bot's queue job is taken over once its lock lapses (QUEUE_LOCK_MS, 2 s here), and the
// leases it held (6 s at most) are waited out; then the restarted bot finishes its work.
const RECOVERY_MS = 15_000;

interface World {
  /** The test's own `expect`: the scenarios run at once. */
  expect: ExpectStatic;
  slack: SlackFake;
  mintlify: MintlifyFake;
  records: JobRecords;
  /** Starts a bot process; resolves with its URL once it listens. */
  boot(): Promise<{ bot: BotProcess; url: string }>;
  close(): Promise<void>;
}

/** Fakes, a Redis namespace and bot processes of one scenario; closed when its test ends (tests run at once). */
async function world(t: TestContext): Promise<World> {
  const slack = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  const namespace = uniqueNamespace('crash');
  const env = botEnv(slack, mintlify, {
    ...FAST_POLL,
    REDIS_URL: TEST_REDIS_URL,
    STORE_NAMESPACE: namespace,
    QUEUE_LOCK_MS: '2000',
  });
  const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
  const store: Store = await openRedisStore({ url: TEST_REDIS_URL, namespace, logger });
  const bots: BotProcess[] = [];
  const created: World = {
    expect: t.expect,
    slack,
    mintlify,
    records: new JobRecords(store),
    async boot() {
      const bot = runBot(env);
      bots.push(bot);
      const url = await bot.listening();
      // The worker's code loads after the receiver listens: the cases' waits start once it runs.
      await bot.printed(/docs-agent worker is running/);
      return { bot, url };
    },
    async close() {
      for (const bot of bots) bot.child.kill('SIGKILL');
      await Promise.all([slack.close(), mintlify.close(), store.close()]);
    },
  };
  t.onTestFinished(() => created.close());
  // What each bot process said, when a scenario fails.
  t.onTestFailed(() => {
    for (const [index, bot] of bots.entries()) console.log(`--- bot process ${index + 1}:\n${bot.output()}`);
  });
  return created;
}

async function kill(bot: BotProcess): Promise<void> {
  bot.child.kill('SIGKILL');
  await bot.exited;
}

const startJob = (w: World, url: string, text: string) =>
  sendSlashCommand(url, SECRETS.signingSecret, {
    text,
    channel_id: CHANNEL,
    user_id: REQUESTER,
    response_url: w.slack.responseUrl(),
  });

/** What Slack holds: the job cards, and the news of the job, by the metadata they were posted with. */
const marked = (w: World, type: string): StoredMessage[] =>
  w.slack
    .history(CHANNEL)
    .filter((message) => (message.metadata as { event_type?: string })?.event_type === type);
const cards = (w: World) => marked(w, 'docs_agent_job');
const news = (w: World) => marked(w, 'docs_agent_job_news');

/** Lets the job end, then waits until its end is announced and recorded; exactly one card and one reply. */
async function expectFollowedToItsEnd(w: World, jobId: string): Promise<void> {
  const { expect } = w;
  w.mintlify.setJob(jobId, { status: 'completed', prLink: PR });
  await expect
    .poll(async () => w.records.get(jobId), { timeout: RECOVERY_MS })
    .toMatchObject({ status: 'completed', prLink: PR, announced: ['0:completed'] });
  const record = await w.records.get(jobId);
  expect(record?.pendingCard).toBeUndefined();
  expect(record?.noticesInFlight).toBeUndefined();
  expect(cards(w)).toHaveLength(1);
  expect(record?.cardTs).toBe(cards(w)[0]?.ts);
  const replies = news(w);
  expect(replies).toHaveLength(1);
  expect(replies[0]).toMatchObject({ thread_ts: record?.threadTs });
  expect(replies[0]?.text).toContain('is done');
}

describe.concurrent(
  'the bot killed at each step of a job’s life, then restarted',
  { timeout: 90_000 },
  () => {
    it('while Mintlify creates the job (it did, but the answer never came): the requester is told', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      w.mintlify.injectFault('createJob', { delayMs: HELD_BACK_MS, phase: 'body' });
      const created = new Promise<void>((resolve) => {
        w.mintlify.onAnswer((request) => request.operation === 'createJob' && resolve());
      });
      await startJob(w, first.url, 'Document the export command');
      await created;
      await kill(first.bot);

      await w.boot();
      // The restarted bot takes the same queue job over: it finds the start written down, never asks
      // Mintlify again, and answers through the command's own response URL, under "Starting…".
      const told = await w.slack.waitForCall(
        'response_url',
        (call) => String(call.args.text).includes('I was interrupted'),
        RECOVERY_MS,
      );
      expect(String(told.args.text)).toContain('while starting your docs agent job');
      expect(String(told.args.text)).toContain('Document the export command');
      expect(String(told.args.text)).toContain('It may have started anyway');
      expect(told.args).toMatchObject({ response_type: 'ephemeral' });
      expect(told.args.replace_original).toBeUndefined();
      expect(cards(w)).toHaveLength(0);
      expect(w.mintlify.requestsFor('createJob')).toHaveLength(1);
      expect(w.slack.callsTo('response_url')).toHaveLength(1);
    });

    it('after the job was created, before its card reached Slack: the card is posted once, and the job followed', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      // Slack fails the card, slowly: the bot is killed while it waits, with nothing posted.
      w.slack.failNext('chat.postMessage', { status: 500, delayMs: HELD_BACK_MS });
      const cardTried = w.slack.waitForCall('chat.postMessage');
      await startJob(w, first.url, 'Document the import command');
      await cardTried;
      await kill(first.bot);
      const [jobId] = [...w.mintlify.jobs.keys()];
      expect(await w.records.get(jobId as string)).toMatchObject({
        cardTs: null,
        pendingCard: { threadTs: null },
      });

      await w.boot();
      await expect.poll(() => cards(w).length, { timeout: RECOVERY_MS }).toBe(1);
      await expectFollowedToItsEnd(w, jobId as string);
    });

    it('after a channel where posting is restricted refused the card, before it moved to the DM: the DM says why, without sending the requester to invite the bot', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      // Only admins may post in the channel: Slack refuses the card there. The card's post in the
      // requester's DM is under way (and fails, slowly) when the bot is killed.
      w.slack.failNext('chat.postMessage', { error: 'restricted_action', channel: CHANNEL });
      w.slack.failNext('chat.postMessage', { status: 500, delayMs: HELD_BACK_MS, channel: REQUESTER });
      const dmTried = w.slack.waitForCall('chat.postMessage', (call) => call.args.channel === REQUESTER);
      await startJob(w, first.url, 'Document the release calendar');
      await dmTried;
      await kill(first.bot);
      const [jobId] = [...w.mintlify.jobs.keys()];
      expect(await w.records.get(jobId as string)).toMatchObject({ cardTs: null });

      await w.boot();
      const card = await w.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.channel === REQUESTER && call.response.ok === true,
        RECOVERY_MS,
      );
      const note = await w.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.thread_ts === card.response.ts,
        RECOVERY_MS,
      );
      expect(String(note.args.text)).toMatch(new RegExp(`^Slack doesn’t let me post in <#${CHANNEL}>`));
      expect(String(note.args.text)).not.toContain('/invite');
      const told = await w.slack.waitForCall(
        'response_url',
        (call) => String(call.args.text).includes('DM'),
        RECOVERY_MS,
      );
      expect(String(told.args.text)).not.toContain('/invite');
      expect(w.mintlify.requestsFor('createJob')).toHaveLength(1);
    });

    it('after the card was posted, before the record knew it: the card is found, not posted again', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      // Slack takes the card at once but its answer is held back: the bot dies not knowing.
      w.slack.failNext('chat.postMessage', { delayMs: HELD_BACK_MS });
      const cardPosted = w.slack.waitForCall('chat.postMessage');
      await startJob(w, first.url, 'Document the audit log');
      await cardPosted;
      await kill(first.bot);
      const [jobId] = [...w.mintlify.jobs.keys()];
      expect(cards(w)).toHaveLength(1);
      expect(await w.records.get(jobId as string)).toMatchObject({ cardTs: null });

      const second = await w.boot();
      await expect
        .poll(async () => (await w.records.get(jobId as string))?.cardTs, { timeout: RECOVERY_MS })
        .toBe(cards(w)[0]?.ts);
      expect(second.bot.output()).toContain(`job ${jobId}: found its card, posted before a restart`);
      await expectFollowedToItsEnd(w, jobId as string);
    });

    it('while sending a follow-up (Mintlify got it, the answer never came): it is not sent twice, and its author is told', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      await startJob(w, first.url, 'Document the import command');
      await expect.poll(() => cards(w).length).toBe(1);
      const cardTs = cards(w)[0]?.ts as string;
      await expect
        .poll(async () => (await w.records.get([...w.mintlify.jobs.keys()][0] as string))?.cardTs)
        .toBe(cardTs);

      w.mintlify.injectFault('sendMessage', { delayMs: HELD_BACK_MS, phase: 'body' });
      const sent = new Promise<void>((resolve) => {
        w.mintlify.onAnswer((request) => request.operation === 'sendMessage' && resolve());
      });
      const said = { user: REQUESTER, text: 'Also list the flags', thread_ts: cardTs };
      const { ts } = w.slack.seedMessage(CHANNEL, said);
      await sendEvent(first.url, SECRETS.signingSecret, {
        type: 'message',
        channel: CHANNEL,
        channel_type: 'channel',
        ts,
        ...said,
      });
      await sent;
      await kill(first.bot);

      await w.boot();
      const told = await w.slack.waitForCall(
        'chat.postEphemeral',
        (call) => call.args.user === REQUESTER && call.args.thread_ts === cardTs,
        RECOVERY_MS,
      );
      expect(String(told.args.text)).toContain('while sending your reply');
      expect(w.mintlify.requestsFor('sendMessage')).toHaveLength(1);
    });

    it('while sending a follow-up its author edited meanwhile: its author is told, of the edit too, and the job it may have reopened is followed', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      await startJob(w, first.url, 'Document the export flags');
      await expect.poll(() => cards(w).length).toBe(1);
      const [jobId] = [...w.mintlify.jobs.keys()];
      const cardTs = cards(w)[0]?.ts as string;
      await expect.poll(async () => (await w.records.get(jobId as string))?.cardTs).toBe(cardTs);
      // The job is done: its pull request is ready, and no longer followed.
      await expectFollowedToItsEnd(w, jobId as string);

      // A reply reopens it at Mintlify, whose answer is held back; its author fixes a typo meanwhile.
      w.mintlify.injectFault('sendMessage', { delayMs: HELD_BACK_MS, phase: 'body' });
      const sent = new Promise<void>((resolve) => {
        w.mintlify.onAnswer((request) => request.operation === 'sendMessage' && resolve());
      });
      const said = { user: REQUESTER, text: 'Also list the falgs', thread_ts: cardTs };
      const { ts } = w.slack.seedMessage(CHANNEL, said);
      const replyEvent = { type: 'message', channel: CHANNEL, channel_type: 'channel', ts, ...said };
      await sendEvent(first.url, SECRETS.signingSecret, replyEvent);
      await sent;
      const editedAt = `${Math.floor(Date.now() / 1000)}.000100`;
      await sendEvent(
        first.url,
        SECRETS.signingSecret,
        messageChanged(replyEvent, 'Also list the flags', {
          ts: `${Math.floor(Date.now() / 1000)}.000200`,
          edited: { user: REQUESTER, ts: editedAt },
        }),
      );
      await first.bot.printed(/an edit waits for the reply it edits/);
      await kill(first.bot);

      await w.boot();
      // As for a reply not edited: the job may have it, and its author is told so.
      const toAuthor = (words: string) => (call: SlackCall) =>
        call.args.user === REQUESTER &&
        call.args.thread_ts === cardTs &&
        String(call.args.text).includes(words);
      await w.slack.waitForCall('chat.postEphemeral', toAuthor('while sending your reply'), RECOVERY_MS);
      // The edit is not sent, in the same doubt: not as if the job surely had the reply.
      await w.slack.waitForCall('chat.postEphemeral', toAuthor('I didn’t send your edit'), RECOVERY_MS);
      expect(w.slack.callsTo('chat.postEphemeral').filter(toAuthor('already has'))).toEqual([]);
      expect(w.mintlify.requestsFor('sendMessage')).toHaveLength(1);
      // Mintlify took it: the agent's new round ends, and the thread hears of it.
      w.mintlify.setJob(jobId as string, { status: 'completed', prLink: `${PR}#round-2` });
      await expect.poll(() => news(w).length, { timeout: RECOVERY_MS }).toBe(2);
    });

    it('while gathering a digest asked for: the restarted bot posts it, rather than promise it and post nothing', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      w.mintlify.setVisitors(visitorsRows(3));
      // Mintlify's read of the visitors is under way when the bot dies.
      w.mintlify.injectFault('visitors', { delayMs: HELD_BACK_MS });
      await sendSlashCommand(first.url, SECRETS.signingSecret, {
        text: 'digest',
        channel_id: CHANNEL,
        user_id: REQUESTER,
        response_url: w.slack.responseUrl('asker'),
      });
      await expect.poll(() => w.mintlify.requestsFor('visitors').length).toBe(1);
      await kill(first.bot);

      // The restarted bot runs the request again once its lock lapses (QUEUE_LOCK_MS, 2 s here),
      // before the dead run's hold of the channel's digest (6 s at most) has: nobody else prepares it.
      await w.boot();
      const digests = () =>
        w.slack
          .history(CHANNEL)
          .filter(
            (message) =>
              (message.metadata as { event_type?: string })?.event_type === 'docs_agent_digest_on_request',
          );
      await expect.poll(() => digests().length, { timeout: RECOVERY_MS }).toBe(1);
      // Nobody else is preparing it: its asker is not told one is.
      const toAsker = w.slack.callsTo('response_url').filter((call) => call.responseId === 'asker');
      expect(toAsker.map((call) => String(call.args.text))).not.toContainEqual(
        expect.stringContaining('already being prepared'),
      );
    });

    it('while following the job (a check under way): the restarted bot follows it to its end', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      await startJob(w, first.url, 'Document the search page');
      await expect.poll(() => cards(w).length).toBe(1);
      const [jobId] = [...w.mintlify.jobs.keys()];
      await expect.poll(async () => (await w.records.get(jobId as string))?.cardTs).toBeTruthy();
      // A check is under way when the bot dies: Mintlify's answer is held back.
      w.mintlify.injectFault('getJob', { delayMs: HELD_BACK_MS, phase: 'body' });
      const checking = new Promise<void>((resolve) => {
        w.mintlify.onAnswer((request) => request.operation === 'getJob' && resolve());
      });
      await checking;
      await kill(first.bot);

      await w.boot();
      await expectFollowedToItsEnd(w, jobId as string);
    });

    it('while posting the final reply (Slack took it, the bot never heard): it is not posted again', async (t) => {
      const w = await world(t);
      const { expect } = t;
      const first = await w.boot();
      await startJob(w, first.url, 'Document the billing page');
      await expect.poll(() => cards(w).length).toBe(1);
      const [jobId] = [...w.mintlify.jobs.keys()];
      await expect.poll(async () => (await w.records.get(jobId as string))?.cardTs).toBeTruthy();
      w.slack.failNext('chat.postMessage', { delayMs: HELD_BACK_MS });
      const replyPosted = w.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.thread_ts !== undefined,
      );
      w.mintlify.setJob(jobId as string, { status: 'completed', prLink: PR });
      await replyPosted;
      await kill(first.bot);
      expect(news(w)).toHaveLength(1);
      expect((await w.records.get(jobId as string))?.announced).toEqual([]);

      const second = await w.boot();
      await expectFollowedToItsEnd(w, jobId as string);
      expect(second.bot.output()).toContain(`job ${jobId}: notice 0:completed was posted before a restart`);
    });
  },
);
