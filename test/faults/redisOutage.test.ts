import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnrecordedJobError } from '../../src/jobs/jobStarts.js';
import { startJob } from '../../src/jobs/startJob.js';
import { TRY_AGAIN_SHORTLY } from '../../src/listeners/context.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import { FAST_POLL, record, startFollowedJob, textOf, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { mentionEvent } from '../support/slackRequests.js';
import { heldStep } from '../support/leases.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

const PR = 'https://github.com/acme/docs/pull/31';

/** Redis goes away while the bot runs, then comes back with what it held (a restart, a failover). */
describe('Redis lost for a while during a run', () => {
  let redis: PrivateRedis;
  let h: BotHarness;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    // A check running when Redis went away is taken up again once its lock lapses.
    h = await startBot({
      env: { ...FAST_POLL, REDIS_URL: redis.url, QUEUE_LOCK_MS: '2000' },
      // Past the 5-s wait of a request that met Redis away: the start runs again before its job is recorded.
      recordAgainEveryMs: 12_000,
    });
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

  it(
    'answers commands in plain words meanwhile, lets Slack deliver events again, crashes nothing, and afterwards announces the job’s end once',
    { timeout: 40_000 },
    async () => {
      const job = await startFollowedJob(h, 'Document the export command');
      await redisAway();

      // The slash command: the queue cannot take it, so the ack itself says so; nothing is started.
      const started = await h.command('Document the import command');
      expect(started.status).toBe(200);
      expect(started.json).toMatchObject({ response_type: 'ephemeral', text: TRY_AGAIN_SHORTLY });
      const status = await h.command('status');
      expect(status.json).toMatchObject({ response_type: 'ephemeral', text: TRY_AGAIN_SHORTLY });

      // Events are not acknowledged until queued: Slack delivers them again later.
      const mention = mentionEvent({ text: '<@U0BOT> Document X', ts: '1800000001.000100' });
      const steer = {
        type: 'message',
        channel: job.channel,
        channel_type: 'channel',
        user: 'U0BEA',
        text: 'Also the flags',
        ts: '1800000002.000100',
        thread_ts: job.cardTs,
      };
      expect((await h.event(mention, { eventId: 'EvMENTION' })).status).toBe(500);
      expect((await h.event(steer, { eventId: 'EvSTEER' })).status).toBe(500);

      // The job ends while Redis is away: nothing can be checked or posted until it is back.
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(1); // nothing started that could not be kept
      expect(threadReplies(h, job)).toHaveLength(0);

      await redisBack();
      // BullMQ's workers take up their queues again within seconds of the reconnection.
      await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.thread_ts === job.cardTs && String(call.args.text).includes(PR),
        20_000,
      );
      await expect.poll(async () => (await record(h, job.jobId))?.announced).toEqual(['0:completed']);

      // Slack's own retries of the two events now go through, once each.
      const retry = { retryNum: 1, retryReason: 'http_error' };
      expect((await h.event(mention, { eventId: 'EvMENTION', ...retry })).status).toBe(200);
      expect((await h.event(steer, { eventId: 'EvSTEER', ...retry })).status).toBe(200);
      expect(
        (await h.event(steer, { eventId: 'EvSTEER', retryNum: 2, retryReason: 'http_error' })).status,
      ).toBe(200);
      await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(2);
      await expect.poll(() => h.mintlify.requestsFor('sendMessage').length).toBe(1);
      await h.bot.drained();
      expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(1);
      expect(threadReplies(h, job)).toHaveLength(1);
    },
  );

  it(
    'keeps a job Mintlify created as Redis went away: recorded once Redis is back, its card posted once',
    { timeout: 90_000 },
    async () => {
      const channel = 'C0KEEP';
      const created = h.mintlify.requestsFor('createJob').length;
      const answered = h.slack.callsTo('response_url').length;
      // Mintlify answers the create only once Redis is gone: the job exists, its record cannot be written yet.
      const answer = heldStep();
      h.mintlify.injectFault('createJob', { until: answer.until });
      await h.command('Document the retention setting', { channel_id: channel });
      await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(created + 1);
      await redisAway();
      answer.release();
      await expect
        .poll(() => logCount('was created at Mintlify, but Redis is away'), { timeout: 10_000 })
        .toBe(1);
      await redisBack();

      // Redis's reconnection (up to 5 s between tries), then the start's next try: 10-15 s on a busy
      // machine, past 20 s once with the whole suite running.
      const card = await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.channel === channel,
        40_000,
      );
      expect(textOf(card)).toContain('Document the retention setting');
      expect(logCount('recorded once Redis answered again')).toBe(1);
      // Run again in this process before that, the start waited for the record instead of answering.
      expect(logCount('a start waits for its job to be recorded')).toBeGreaterThan(0);
      const kept = await vi.waitFor(
        async () => {
          const found = await h.bot.context.jobs.records.byThread(channel, String(card.response.ts));
          if (!found) throw new Error('the card is posted, but its thread is not on the record yet');
          return found;
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(kept.cardTs).toBe(card.response.ts);
      expect(kept.pendingCard).toBeUndefined();
      // Asked once, shown once, and the person answered once: the card stands for the start.
      await h.bot.drained(20_000);
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(created + 1);
      expect(
        h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === channel),
      ).toHaveLength(1);
      // The start's run again answers from the record: the card says it all, or the person is told it
      // follows; never that the start was interrupted.
      const answers = h.slack.callsTo('response_url').slice(answered);
      expect(answers.length).toBeLessThanOrEqual(1);
      for (const answer of answers) expect(textOf(answer)).toContain('its card will appear');
      expect(logCount('could not be recorded')).toBe(0);
    },
  );

  it('holds back a start run again while its job waits here to be recorded, asking Mintlify nothing', async () => {
    const startId = 'command_start-unrecorded-1';
    const created = h.mintlify.requestsFor('createJob').length;
    const { starts } = h.bot.context.jobs;
    starts.unrecorded.set(startId, 'job-unrecorded-1');
    try {
      const input = {
        prompt: 'Document X',
        requestedBy: 'U0ADA',
        channel: 'C0DOCS',
        door: 'command' as const,
      };
      const error: unknown = await startJob(h.bot.context.jobs, input, startId).catch(
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(UnrecordedJobError);
      // Its request's queue job waits and runs again, as while Redis is away.
      expect(isStoreUnavailable(error)).toBe(true);
      expect(await starts.get(startId)).toBeUndefined();
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(created);
    } finally {
      starts.unrecorded.delete(startId);
    }
  });

  it('does not post the final reply twice when Redis went away between the post and its record', async () => {
    const job = await startFollowedJob(h, 'Document the audit log');
    // The reply reaches Slack at once, but its answer comes back only after Redis is gone.
    const answer = heldStep();
    h.slack.failNext('chat.postMessage', { until: answer.until });
    const arrived = h.slack.waitForCall('chat.postMessage', (call) => call.args.thread_ts === job.cardTs);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    const posted = await arrived;
    expect(textOf(posted)).toContain(PR);
    const failures = logCount('checking jobs fails');
    await redisAway();
    answer.release();
    // Slack's answer comes; the record cannot say so.
    await expect.poll(() => logCount('checking jobs fails'), { timeout: 10_000 }).toBe(failures + 1);
    await redisBack();

    // On a busy machine Redis's reconnection, then the follower's next check after its failed one, may
    // come past 20 s (it did once in a full run).
    await expect
      .poll(async () => (await record(h, job.jobId))?.announced, { timeout: 40_000 })
      .toEqual(['0:completed']);
    // Either the record's write landed as the connection dropped (its answer lost), or the notice
    // was found in the thread by its mark: which one depends on the moment Redis went; never a second post.
    expect(threadReplies(h, job)).toHaveLength(1);
    expect((await record(h, job.jobId))?.noticesInFlight).toBeUndefined();
  });
});
