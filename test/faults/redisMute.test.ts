import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAY_HAVE_QUEUED, TRY_AGAIN_SHORTLY } from '../../src/listeners/context.js';
import { MESSAGE_LOST, REPLY_LOST } from '../../src/listeners/events/lostMessage.js';
import { createLogger } from '../../src/log.js';
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { startSlackFake } from '../fakes/slackFake.js';
import { FAST_POLL, record, startFollowedJob, textOf, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { mentionEvent } from '../support/slackRequests.js';
import { botEnv, runBot } from '../support/botProcess.js';
import { type MuteProxy, startMuteProxy, startSilentServer } from '../support/muteProxy.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { uniqueNamespace } from '../support/redis.js';
import { chooseShortcut, submit } from '../support/shortcut.js';

const PR = 'https://github.com/acme/docs/pull/77';

describe.concurrent('a Redis that takes connections but never answers, at start', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it(
    'stops the bot within its 10-s deadline, naming Redis, never printing the password',
    { timeout: 40_000 },
    async ({ expect }) => {
      const silent = await startSilentServer();
      const slack = await startSlackFake({ botToken: SECRETS.botToken });
      const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
      closers.push(silent.close, slack.close, mintlify.close);
      const password = 'mute-redis-password-3';
      const bot = runBot(
        botEnv(slack, mintlify, { REDIS_URL: `redis://:${password}@127.0.0.1:${silent.port}` }),
      );
      closers.push(async () => bot.child.kill('SIGKILL'));

      // A bot that waited on Redis for good would never exit (the test's own timeout would end it).
      expect(await bot.exited).toBe(1);
      const output = bot.output();
      expect(output).toContain(
        `docs-agent cannot start: Redis at redis://127.0.0.1:${silent.port} did not answer`,
      );
      expect(output).not.toContain(password);
      expect(output).not.toContain('listening on port');
    },
  );
});

// Runs alongside the start above: both wait out a deadline, on a Redis of their own.
describe.concurrent('a command of the bot’s own to a Redis that went mute', () => {
  it(
    'gives up after its deadline, counts as Redis away, and works again once Redis answers',
    { timeout: 20_000 },
    async ({ expect }) => {
      const redis = await startPrivateRedis();
      const proxy = await startMuteProxy(redis);
      const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
      const store = await openRedisStore({ url: proxy.url, namespace: uniqueNamespace('mute'), logger });
      try {
        await store.kv.set('thread:C1:1.1', 'job-1');
        proxy.mute();
        // Both asked at once: each waits out the same deadline. The deadline's own error: the
        // command was given up, not answered late.
        const [error, claimError] = await Promise.all([
          store.kv.get('thread:C1:1.1').catch((caught: unknown) => caught),
          store.atomic.setIfAbsent('seen:x', '1', 60_000).catch((caught: unknown) => caught),
        ]);
        expect(error).toBeInstanceOf(StoreTimeoutError);
        expect(isStoreUnavailable(error)).toBe(true);
        expect(claimError).toBeInstanceOf(StoreTimeoutError);
        proxy.speak();
        await expect.poll(() => store.kv.get('thread:C1:1.1')).toBe('job-1');
      } finally {
        proxy.speak();
        await store.close();
        await proxy.close();
        await redis.close();
      }
    },
  );
});

describe('a Redis that goes mute while the bot runs, then answers again', () => {
  let redis: PrivateRedis;
  let proxy: MuteProxy;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    proxy = await startMuteProxy(redis);
    h = await startBot({ env: { ...FAST_POLL, REDIS_URL: proxy.url } });
  });
  afterAll(async () => {
    proxy?.speak();
    await h?.close();
    await proxy?.close();
    await redis?.close();
  });

  it(
    'answers "try again shortly" at once meanwhile, then resumes the work it held, and does nothing twice',
    { timeout: 40_000 },
    async () => {
      const job = await startFollowedJob(h, 'Document the cache settings');
      proxy.mute();
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

      // The queue cannot take the command: the ack says so within Slack's 3 s. The bound is Slack's
      // deadline, not a speed claim: an ack later than that, Slack shows the person as failed (the
      // bot answers after its 1-s wait on the queue; without that wait, only at its 5-s deadline).
      const asked = Date.now();
      const answer = await h.command('Document the eviction policy');
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(answer.json).toMatchObject({ response_type: 'ephemeral', text: TRY_AGAIN_SHORTLY });

      // Mute past the 5-s deadline of the bot's own commands (one of them, asked now, gives up on it):
      // the work waits rather than failing.
      await expect(h.bot.store.kv.get('mute-probe')).rejects.toBeInstanceOf(StoreTimeoutError);
      expect(threadReplies(h, job)).toHaveLength(0);
      expect((await fetch(`${h.url}/healthz`)).status).toBe(200);

      proxy.speak();
      const reply = await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.thread_ts === job.cardTs && textOf(call).includes(PR),
        20_000,
      );
      expect(textOf(reply)).toContain(PR);
      await expect
        .poll(async () => (await record(h, job.jobId))?.announced, { timeout: 10_000 })
        .toEqual(['0:completed']);

      // Working again: a new command starts a job; the one answered "try again" was queued once
      // Redis answered, and taken back (never started).
      await startFollowedJob(h, 'Document the memory policy');
      await h.bot.drained();
      expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
        expect.objectContaining({ prompt: 'Document the cache settings' }),
        expect.objectContaining({ prompt: 'Document the memory policy' }),
      ]);
      expect(threadReplies(h, job)).toHaveLength(1);
    },
  );

  it('answers a command whose add reached Redis but whose answer was lost "it may go ahead anyway", and it goes ahead once', async () => {
    // The connection is cut once the add has passed: Redis ran it, the bot never heard.
    proxy.cutAfter('Document the lost answer');
    const answer = await h.command('Document the lost answer');
    expect(answer.json).toMatchObject({ response_type: 'ephemeral', text: MAY_HAVE_QUEUED });

    // Redis's reconnection after the cut (up to 5 s between tries), then the queue's worker: past
    // 10 s once on a busy machine.
    const created = () =>
      h.mintlify
        .requestsFor('createJob')
        .filter((request) => (request.body as { prompt: string }).prompt === 'Document the lost answer');
    await expect.poll(() => created().length, { timeout: 20_000 }).toBe(1);
    await h.bot.drained();
    expect(created()).toHaveLength(1);
  });

  it('replaces a form whose add reached Redis but whose answer was lost with that answer, closing the way to a second submission', async () => {
    const chosen = h.slack.seedMessage('C0DOCS', { user: 'U0BEA', text: 'Typo on the pricing page' });
    await chooseShortcut(h, { ts: chosen.ts, user: 'U0BEA', text: chosen.text });
    const opened = await h.slack.waitForCall('views.open');
    proxy.cutAfter('Fix the lost form');
    const answer = await submit(h, opened, 'Fix the lost form');
    expect(answer.json).toMatchObject({
      response_action: 'update',
      view: { type: 'modal', blocks: [{ text: { text: MAY_HAVE_QUEUED } }] },
    });
    expect(JSON.stringify(answer.json)).not.toContain('"submit"');
    await expect
      .poll(
        () =>
          h.mintlify
            .requestsFor('createJob')
            .filter((request) => JSON.stringify(request.body).includes('Fix the lost form')).length,
        { timeout: 20_000 },
      )
      .toBe(1);
  });

  it('starts no job for a form answered "try again shortly" whose submission reached the queue late', async () => {
    const chosen = h.slack.seedMessage('C0DOCS', { user: 'U0BEA', text: 'The quota table is wrong' });
    await chooseShortcut(h, { ts: chosen.ts, user: 'U0BEA', text: chosen.text });
    const opened = await h.slack.waitForCall('views.open', (call) =>
      JSON.stringify(call.args).includes(chosen.ts),
    );
    proxy.mute();
    const answer = await submit(h, opened, 'Fix the quota table');
    expect(JSON.stringify(answer.json)).toContain(JSON.stringify(TRY_AGAIN_SHORTLY).slice(1, -1));

    // Held past the 5-s deadline, the submission's add lands once Redis answers again.
    await expect(h.bot.store.kv.get('mute-probe')).rejects.toBeInstanceOf(StoreTimeoutError);
    proxy.speak();
    await startFollowedJob(h, 'Document the quota refresh');
    await h.bot.drained();
    const prompts = h.mintlify.requestsFor('createJob').map((request) => JSON.stringify(request.body));
    expect(prompts.some((prompt) => prompt.includes('Document the quota refresh'))).toBe(true);
    expect(prompts.some((prompt) => prompt.includes('Fix the quota table'))).toBe(false);
  });

  it(
    'are answered as handled at Slack’s last retry, their authors told to send them again, and never acted on when their adds land late',
    { timeout: 40_000 },
    async () => {
      const job = await startFollowedJob(h, 'Document the lost replies');
      const notActedOn = () =>
        h.logs.filter((line) => line.includes('was told it was not taken reached the queue late')).length;
      const [ignoredBefore, sentBefore] = [notActedOn(), h.mintlify.requestsFor('sendMessage').length];
      const mention = mentionEvent({ text: '<@U0BOT> Document the lost mention', ts: '1800000101.000100' });
      const dm = {
        type: 'message',
        channel: 'D0BEA',
        channel_type: 'im',
        user: 'U0BEA',
        text: 'Document the lost DM',
        ts: '1800000102.000100',
      };
      const steer = {
        type: 'message',
        channel: job.channel,
        channel_type: 'channel',
        user: 'U0CAT',
        text: 'Also the lost flags',
        ts: '1800000103.000100',
        thread_ts: job.cardTs,
        parent_user_id: 'U0BOT',
      };
      // "Also send to #channel": Slack names the thread's first message (the card) in `root` instead.
      const broadcast = {
        type: 'message',
        subtype: 'thread_broadcast',
        channel: job.channel,
        channel_type: 'channel',
        user: 'U0DEE',
        text: 'Also the lost flags, everyone',
        ts: '1800000104.000100',
        thread_ts: job.cardTs,
        root: { type: 'message', user: 'U0BOT', bot_id: 'B0BOT', text: 'Docs agent job', ts: job.cardTs },
      };
      proxy.mute();
      for (const [event, eventId] of [
        [mention, 'EvLOSTMENTION'],
        [dm, 'EvLOSTDM'],
        [steer, 'EvLOSTSTEER'],
        [broadcast, 'EvLOSTBROADCAST'],
      ] as const) {
        // The first delivery's add is sent, and held: it lands once Redis answers again.
        expect((await h.event(event, { eventId })).status).toBe(500);
        // Slack's third retry is its last: answered as handled, so it stops.
        expect((await h.event(event, { eventId, retryNum: 3, retryReason: 'http_error' })).status).toBe(200);
      }
      const told = await h.slack.waitForCall(
        'chat.postEphemeral',
        (call) => call.args.channel === 'C0DOCS' && call.args.user === 'U0ADA',
      );
      expect(told.args).toMatchObject({ text: MESSAGE_LOST });
      expect(told.args.thread_ts).toBeUndefined(); // a mention at the top: its thread shows no ephemeral
      const toldInDm = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'D0BEA');
      expect(toldInDm.args).toMatchObject({ text: MESSAGE_LOST });
      const toldInThread = await h.slack.waitForCall(
        'chat.postEphemeral',
        (call) => call.args.user === 'U0CAT' && call.args.thread_ts === job.cardTs,
      );
      expect(toldInThread.args).toMatchObject({ channel: job.channel, text: REPLY_LOST });
      const broadcastTold = await h.slack.waitForCall(
        'chat.postEphemeral',
        (call) => call.args.user === 'U0DEE' && call.args.thread_ts === job.cardTs,
      );
      expect(broadcastTold.args).toMatchObject({ channel: job.channel, text: REPLY_LOST });

      await expect(h.bot.store.kv.get('mute-probe')).rejects.toBeInstanceOf(StoreTimeoutError);
      proxy.speak();
      // Working again: a new command starts a job; the four lost messages, which reached the queue
      // late, start and send nothing.
      await startFollowedJob(h, 'Document the found replies');
      await h.bot.drained();
      expect(notActedOn() - ignoredBefore).toBe(4);
      const prompts = h.mintlify.requestsFor('createJob').map((request) => JSON.stringify(request.body));
      expect(prompts.filter((prompt) => /lost (mention|DM)/.test(prompt))).toEqual([]);
      expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(sentBefore);
    },
  );

  it(
    'do not tell people talking among themselves in the digest’s thread that the agent did not get their reply',
    { timeout: 40_000 },
    async () => {
      // The weekly digest, a message of the bot's at the top of its channel: people discuss it in its thread.
      const digest = h.slack.seedMessage('C0DOCS', {
        user: 'U0BOT',
        bot_id: h.bot.context.jobs.botId,
        text: 'Docs digest: 16–22 Nov 2026',
      });
      const chat = (text: string, ts: string) => ({
        type: 'message',
        channel: 'C0DOCS',
        channel_type: 'channel',
        user: 'U0CAT',
        text,
        ts,
        thread_ts: digest.ts,
        parent_user_id: 'U0BOT',
      });
      proxy.mute();
      for (const [event, eventId] of [
        [chat('// quickstart dropped again, <@U0ADA> any idea?', '1800000201.000100'), 'EvDIGESTCHAT1'],
        [chat('Nice, the API pages are up 20%', '1800000202.000100'), 'EvDIGESTCHAT2'],
      ] as const) {
        expect((await h.event(event, { eventId })).status).toBe(500);
        expect((await h.event(event, { eventId, retryNum: 3, retryReason: 'http_error' })).status).toBe(200);
      }
      proxy.speak();
      await h.bot.drained(20_000);
      // Nothing here was for the bot: "the agent did not get it, send it again" is wrong on both.
      const told = h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.thread_ts === digest.ts);
      expect(told).toHaveLength(0);
    },
  );
});
