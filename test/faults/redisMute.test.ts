import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TRY_AGAIN_SHORTLY } from '../../src/listeners/context.js';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { startSlackFake } from '../fakes/slackFake.js';
import { FAST_POLL, record, startFollowedJob, textOf, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { botEnv, runBot } from '../support/botProcess.js';
import { type MuteProxy, startMuteProxy, startSilentServer } from '../support/muteProxy.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

const PR = 'https://github.com/acme/docs/pull/77';
/** How long Redis stays mute in the running bot's scenario: past the Redis client's 5-s command timeout. */
const MUTE_MS = 6_000;

describe('a Redis that takes connections but never answers, at start', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it(
    'stops the bot within 20 s, naming Redis, never printing the password',
    { timeout: 30_000 },
    async () => {
      const silent = await startSilentServer();
      const slack = await startSlackFake({ botToken: SECRETS.botToken });
      const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
      closers.push(silent.close, slack.close, mintlify.close);
      const password = 'mute-redis-password-3';
      const bot = runBot(
        botEnv(slack, mintlify, { REDIS_URL: `redis://:${password}@127.0.0.1:${silent.port}` }),
      );
      closers.push(async () => bot.child.kill('SIGKILL'));

      const started = Date.now();
      expect(await bot.exited).toBe(1);
      expect(Date.now() - started).toBeLessThan(20_000);
      const output = bot.output();
      expect(output).toContain(
        `docs-agent cannot start: Redis at redis://127.0.0.1:${silent.port} did not answer`,
      );
      expect(output).not.toContain(password);
      expect(output).not.toContain('listening on port');
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

      // The queue cannot take the command: the ack says so, well within Slack's 3 s.
      const asked = Date.now();
      const answer = await h.command('Document the eviction policy');
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(answer.json).toMatchObject({ response_type: 'ephemeral', text: TRY_AGAIN_SHORTLY });

      // Mute for longer than any of the client's own timeouts: the work waits rather than failing.
      await new Promise((resolve) => setTimeout(resolve, MUTE_MS));
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
});
