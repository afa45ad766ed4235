import { createClient } from '@keyv/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecords } from '../../src/jobs/jobRecord.js';
import { STOPPED_TEXT } from '../../src/digest/digestAnswers.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { FAST_POLL, startFollowedJob, waitForReply } from '../jobs/followSupport.js';
import { PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { type BotProcess, botEnv, runBot } from '../support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';
import { sendSlashCommand } from '../support/slackRequests.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function leaseKeys(namespace: string): Promise<string[]> {
  const redis = createClient({ url: TEST_REDIS_URL });
  await redis.connect();
  try {
    return await redis.keys(`${namespace}:lease:*`);
  } finally {
    await redis.quit();
  }
}

/** The bot as a process of its own on Redis, with fakes of Slack and Mintlify; checks every second. */
async function startBotProcess(): Promise<{
  slack: SlackFake;
  mintlify: MintlifyFake;
  namespace: string;
  bot: BotProcess;
  url: string;
}> {
  const slack = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  cleanups.push(
    () => slack.close(),
    () => mintlify.close(),
  );
  const namespace = uniqueNamespace('shutdown');
  // Checks every second: each keeps its job's poll lease for 0.7 s after it.
  const bot = runBot(
    botEnv(slack, mintlify, {
      REDIS_URL: TEST_REDIS_URL,
      STORE_NAMESPACE: namespace,
      POLL_INTERVAL_MS: '1000',
    }),
  );
  cleanups.push(async () => bot.child.kill('SIGKILL'));
  return { slack, mintlify, namespace, bot, url: await bot.listening() };
}

describe('SIGTERM while jobs are followed and a digest is being gathered', () => {
  it('stops within 10 s with exit code 0, posts nothing by halves, and leaves no lease behind', async () => {
    const { slack, mintlify, namespace, bot, url } = await startBotProcess();
    const command = (text: string, channel: string, responseId: string) =>
      sendSlashCommand(url, SECRETS.signingSecret, {
        text,
        channel_id: channel,
        response_url: slack.responseUrl(responseId),
      });

    // Two jobs, followed.
    await command('Document the export command', 'C0JOBS', 'job-a');
    await command('Document the import command', 'C0JOBS', 'job-b');
    await expect
      .poll(() => mintlify.requestsFor('getJob').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    // A digest waiting out Mintlify's analytics rate limit.
    mintlify.setVisitors([{ path: '/quickstart', human: 10, ai: 2, total: 12 }]);
    mintlify.injectFault('visitors', { status: 429, retryAfter: '600' }, 100);
    await command('digest', 'C0DIGEST', 'digest');
    await expect.poll(() => mintlify.requestsFor('visitors').length).toBeGreaterThanOrEqual(1);
    // And a job check under way, its answer slow.
    mintlify.injectFault('getJob', { delayMs: 1_500 });
    const checking = new Promise<void>((resolve) => {
      mintlify.onAnswer((request) => request.operation === 'getJob' && resolve());
    });
    await checking;
    expect(await leaseKeys(namespace)).not.toEqual([]);

    bot.child.kill('SIGTERM');
    // 0: stopped cleanly, before main.ts's hard exit at 9.5 s (which exits 1).
    expect(await bot.exited).toBe(0);

    expect(await leaseKeys(namespace)).toEqual([]);
    expect(bot.output()).toContain('SIGTERM received');
    // The digest was not posted half-gathered; the person who asked was told.
    expect(slack.callsTo('chat.postMessage').filter((call) => call.args.channel === 'C0DIGEST')).toEqual([]);
    const told = slack.callsTo('response_url').filter((call) => call.responseId === 'digest');
    expect(told.at(-1)?.args).toMatchObject({ text: STOPPED_TEXT });
    // The two cards, and nothing else.
    const posted = slack.callsTo('chat.postMessage');
    expect(posted.map((call) => call.args.channel)).toEqual(['C0JOBS', 'C0JOBS']);
    expect(posted.every((call) => call.response.ok)).toBe(true);
  });
});

describe('SIGTERM while a job check waits for a slow Mintlify answer', () => {
  it(
    'cuts the request at the grace, and exits 0 within 10 s, leaving no lease behind',
    { timeout: 90_000 },
    async () => {
      const { slack, mintlify, namespace, bot, url } = await startBotProcess();
      await sendSlashCommand(url, SECRETS.signingSecret, {
        text: 'Document the export command',
        channel_id: 'C0JOBS',
        response_url: slack.responseUrl('job'),
      });
      await expect
        .poll(() => mintlify.requestsFor('getJob').length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(1);
      // The next check's answer is slow (within the client's 15 s wait for headers): it is under way at SIGTERM.
      const reads = mintlify.requestsFor('getJob').length;
      mintlify.injectFault('getJob', { delayMs: 14_000 });
      await expect.poll(() => mintlify.requestsFor('getJob').length, { timeout: 10_000 }).toBe(reads + 1);

      const stoppedAt = Date.now();
      bot.child.kill('SIGTERM');
      const code = await bot.exited;
      // 0: stopped cleanly, before main.ts's hard exit at 9.5 s (which exits 1).
      expect(code).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
      expect(await leaseKeys(namespace)).toEqual([]);
    },
  );
});

describe('stopping while a job check waits between Mintlify retries', () => {
  it(
    'cuts the wait short at the grace, so the check goes back to the queue instead of staying locked',
    { timeout: 30_000 },
    async () => {
      const h = await startBot({
        env: { ...FAST_POLL },
        // A minute between tries: far past the stop's grace (1 s here; the bot's own is 7 s).
        mintlifyOptions: { retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, maxElapsedMs: 600_000 } },
        stopGraceMs: 1_000,
      });
      cleanups.push(() => h.close());
      await startFollowedJob(h, 'Document the stop');
      expect(await h.bot.following()).toBe(1);
      const reads = h.mintlify.requestsFor('getJob').length;
      h.mintlify.injectFault('getJob', { status: 503 }, 1_000);
      // The check is asked once, answered 503, and now waits a minute before asking again.
      await expect.poll(() => h.mintlify.requestsFor('getJob').length).toBeGreaterThan(reads);

      await h.stopBot();
      // The check gave its job back at the grace: the queues did not have to close without it.
      expect(h.logs.some((line) => line.includes('Queues closed before their workers did'))).toBe(false);
      // Its cut-short wait is no failure of the check, and no error in the log.
      expect(h.logs.filter((line) => line.includes('checking jobs fails'))).toEqual([]);
    },
  );
});

describe('a start that ends while its process stops', () => {
  it(
    'hands its job to the queue even so: another instance follows it to its pull request',
    { timeout: 30_000 },
    async () => {
      const first = await startBot({ env: { ...FAST_POLL } });
      cleanups.push(() => first.close());
      let answerCreate = () => {};
      first.mintlify.injectFault('createJob', { until: new Promise<void>((open) => (answerCreate = open)) });
      await first.command('Document the rolling deploy', { channel_id: 'C0ROLL' });
      await expect.poll(() => first.mintlify.requestsFor('createJob').length).toBe(1);

      // A new instance starts (a rolling deploy): nothing to follow yet when it looks at start.
      const second = await startBot({
        env: { ...FAST_POLL },
        slack: first.slack,
        mintlify: first.mintlify,
        namespace: first.config.store.namespace,
      });
      cleanups.push(() => second.close());

      // The first one is told to stop; once its queues are closing, Mintlify answers.
      const stopping = first.stopBot();
      await expect.poll(() => first.logs.some((line) => line.includes('closing the queues'))).toBe(true);
      answerCreate();
      await stopping;

      // The start finished in the stop's grace: its card, and the job's first check, queued.
      const card = first.slack
        .callsTo('chat.postMessage')
        .find((call) => call.args.channel === 'C0ROLL' && call.response.ok === true);
      expect(card).toBeDefined();
      expect(first.logs.filter((line) => line.includes('could not be queued'))).toEqual([]);
      const [jobId] = [...first.mintlify.jobs.keys()];
      first.mintlify.setJob(jobId!, { status: 'completed', prLink: 'https://github.com/acme/docs/pull/9' });
      await waitForReply(
        second,
        { jobId: jobId!, channel: 'C0ROLL', cardTs: String(card!.response.ts) },
        'pull/9',
      );
    },
  );
});

describe('stopping while the queues are being reconciled and Redis does not answer it', () => {
  it('stops all the same: the reconciliation does not hold the stop back', { timeout: 30_000 }, async () => {
    // Every unfinished-jobs read hangs, as on a Redis that takes commands and never answers.
    const hanging = vi
      .spyOn(JobRecords.prototype, 'unfinishedIds')
      .mockImplementation(() => new Promise(() => {}));
    cleanups.push(async () => hanging.mockRestore());
    const h = await startBot({ env: { ...FAST_POLL } });
    cleanups.push(() => h.close());
    await expect.poll(() => hanging.mock.calls.length).toBeGreaterThan(0);

    await h.stopBot(); // before, this waited for the reconciliation for ever
    expect(h.logs.some((line) => line.includes('Queues closed before their workers did'))).toBe(false);
  });
});
