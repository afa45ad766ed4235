import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOMETHING_WRONG } from '../../src/jobs/doorAnswers.js';
import {
  FAST_POLL,
  record,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForReply,
} from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

const PR = 'https://github.com/acme/docs/pull/31';
const TRY_AGAIN = 'Please try again shortly.';

/** Redis goes away while the bot runs, then comes back with what it held (a restart, a failover). */
describe('Redis lost for a while during a run', () => {
  let redis: PrivateRedis;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    h = await startBot({ env: { ...FAST_POLL, REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });

  const logCount = (text: string) => h.logs.filter((line) => line.includes(text)).length;
  const redisAway = async () => {
    const before = logCount('Redis is unreachable');
    await redis.stop({ keepData: true });
    await expect.poll(() => logCount('Redis is unreachable')).toBe(before + 1);
  };
  const redisBack = async () => {
    const before = logCount('Redis is reachable again');
    await redis.start();
    await expect.poll(() => logCount('Redis is reachable again'), { timeout: 10_000 }).toBe(before + 1);
  };

  it('answers every door in plain words meanwhile, crashes nothing, and afterwards announces the job’s end once', async () => {
    const job = await startFollowedJob(h, 'Document the export command');
    await redisAway();

    // The slash command: acknowledged at once, then "try again shortly" to the person alone.
    const started = await h.command('Document the import command', {
      response_url: h.slack.responseUrl('down-1'),
    });
    expect(started.status).toBe(200);
    expect(String((started.json as { text: string }).text)).toContain('Starting a docs agent job');
    const startAnswer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'down-1');
    expect(startAnswer.args).toMatchObject({ response_type: 'ephemeral', text: SOMETHING_WRONG });

    const status = await h.command('status', { response_url: h.slack.responseUrl('down-2') });
    expect(status.status).toBe(200);
    const statusAnswer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'down-2');
    expect(String(statusAnswer.args.text)).toContain(TRY_AGAIN);

    // A mention: told to the person alone, in its thread.
    const mention = {
      type: 'app_mention',
      channel: 'C0DOCS',
      user: 'U0ADA',
      text: '<@U0BOT> Document X',
      ts: '1800000001.000100',
    };
    expect((await h.event(mention)).status).toBe(200);
    const mentionAnswer = await h.slack.waitForCall(
      'chat.postEphemeral',
      (call) => call.args.user === 'U0ADA',
    );
    expect(mentionAnswer.args.text).toBe(SOMETHING_WRONG);

    // A reply in the job's thread is acknowledged; the bot cannot tell whose thread it is, so it stays quiet.
    const steer = {
      type: 'message',
      channel: job.channel,
      channel_type: 'channel',
      user: 'U0BEA',
      text: 'Also the flags',
      ts: '1800000002.000100',
      thread_ts: job.cardTs,
    };
    expect((await h.event(steer)).status).toBe(200);
    await expect
      .poll(() => h.logs.some((line) => line.includes('a thread reply could not be handled')))
      .toBe(true);

    // The job ends while Redis is away: the follower cannot check it, and says why, once.
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await expect.poll(() => h.logs.some((line) => line.includes('checking jobs fails'))).toBe(true);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1); // nothing started that could not be kept
    expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(0);
    expect(threadReplies(h, job)).toHaveLength(0);

    await redisBack();
    await waitForReply(h, job, PR);
    await expect.poll(async () => (await record(h, job.jobId))?.announced).toEqual(['0:completed']);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect(h.logs.filter((line) => line.includes('checking jobs fails'))).toHaveLength(1);
  });

  it('does not post the final reply twice when Redis went away between the post and its record', async () => {
    const job = await startFollowedJob(h, 'Document the audit log');
    // The reply reaches Slack at once, but its answer comes back only after Redis is gone.
    h.slack.failNext('chat.postMessage', { delayMs: 1_500 });
    const arrived = h.slack.waitForCall('chat.postMessage', (call) => call.args.thread_ts === job.cardTs);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    const posted = await arrived;
    expect(textOf(posted)).toContain(PR);
    const failures = logCount('checking jobs fails');
    await redisAway();
    // Slack's answer comes; the record cannot say so.
    await expect.poll(() => logCount('checking jobs fails'), { timeout: 5_000 }).toBe(failures + 1);
    await redisBack();

    await expect
      .poll(async () => (await record(h, job.jobId))?.announced, { timeout: 20_000 })
      .toEqual(['0:completed']);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect(
      h.logs.some((line) =>
        line.includes(`job ${job.jobId}: notice 0:completed was posted before a restart`),
      ),
    ).toBe(true);
    expect((await record(h, job.jobId))?.noticesInFlight).toBeUndefined();
  }, 30_000);
});
