import { describe, it, type TestContext } from 'vitest';
import { JobRecords } from '../../src/jobs/jobRecord.js';
import { createLogger } from '../../src/log.js';
import { leaseHeld } from '../../src/store/lease.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import type { Store } from '../../src/store/store.js';
import { SECRETS } from '../support/botHarness.js';
import { botEnv, runBot, testProcesses } from '../support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';
import { sendEvent, sendSlashCommand } from '../support/slackRequests.js';

/**
 * Scaled out (a web process, workers on their own), a worker is stopped while it posts a job's
 * card: Slack took the card, but its answer came after the worker's grace. The start goes back to
 * the queue, and another worker finishes it: the card in the channel is the job's, and its
 * requester is not told that Slack did not take it.
 *
 * Each scenario has fakes, a namespace and processes of its own: the scenarios run at once (most
 * of each is a wait on a grace or a lock).
 */

/**
 * A web process and a first worker on a namespace of their own; `worker()` starts another (once
 * the first is stopped), with the same environment.
 */
async function scaledOut(t: TestContext, name: string, settings: Record<string, string>) {
  const { startFakes, keep } = testProcesses(t);
  const { slack, mintlify } = await startFakes();
  const namespace = uniqueNamespace(name);
  const env = (services: string) =>
    botEnv(slack, mintlify, {
      REDIS_URL: TEST_REDIS_URL,
      STORE_NAMESPACE: namespace,
      SERVICES: services,
      // A worker stopped mid-work gives it up after this.
      QUEUE_LOCK_MS: '2000',
      ...settings,
    });
  const web = keep(runBot(env('web')));
  const worker = async () => {
    const started = keep(runBot(env('worker')));
    await started.printed(/worker is running/);
    return started;
  };
  const first = await worker();
  const url = await web.listening();
  /** The first worker stopped (SIGTERM), past its grace. */
  const stopFirst = async () => {
    first.child.kill('SIGTERM');
    await first.exited;
  };
  /** Read the namespace's store while `read` runs. */
  const withStore = async <T>(read: (store: Store) => Promise<T>): Promise<T> => {
    const store = await openRedisStore({
      url: TEST_REDIS_URL,
      namespace,
      logger: createLogger({ level: 'error', secrets: [], sink: () => {} }),
    });
    try {
      return await read(store);
    } finally {
      await store.close();
    }
  };
  return { slack, mintlify, url, worker, stopFirst, withStore };
}

describe.concurrent('a worker stopped mid-work, scaled out', { timeout: 120_000 }, () => {
  it('a start whose card Slack took as its worker stopped is finished by another worker, which finds that card', async (t) => {
    const { expect } = t;
    // Its job's checks are far off: the start run again is what finishes it.
    const bot = await scaledOut(t, 'stop-mid-start', {
      POLL_INTERVAL_MS: '60000',
      POLL_MAX_INTERVAL_MS: '120000',
    });
    const { slack, mintlify } = bot;

    // Slack stores the card at once, and answers after the worker's grace (7 s) is over.
    slack.failNext('chat.postMessage', { delayMs: 30_000 });
    const cardPosted = slack.waitForCall('chat.postMessage', undefined, 20_000);
    const ack = await sendSlashCommand(bot.url, SECRETS.signingSecret, {
      text: 'Document the audit log',
      response_url: slack.responseUrl(),
    });
    expect(ack.status).toBe(200);
    await cardPosted;
    await bot.stopFirst();
    await bot.worker();

    const [jobId] = [...mintlify.jobs.keys()];
    const cards = () =>
      slack
        .history('C0CHANNEL')
        .filter((message) => (message.metadata as { event_type?: string })?.event_type === 'docs_agent_job');
    const answers = () => slack.callsTo('response_url').map((call) => String(call.args.text ?? ''));
    // The start, run again by the second worker, ends: its card recorded, or its requester told otherwise.
    const cardTs = await bot.withStore(async (store) => {
      const records = new JobRecords(store);
      await expect
        .poll(
          async () =>
            answers().some((text) => text.includes('did not take its card')) ||
            (await records.get(jobId as string))?.cardTs != null,
          { timeout: 30_000 },
        )
        .toBe(true);
      return (await records.get(jobId as string))?.cardTs;
    });
    expect(answers().filter((text) => text.includes('did not take its card'))).toEqual([]);
    expect(cards()).toHaveLength(1);
    expect(cardTs).toBe(cards()[0]?.ts);
    expect(mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('a digest asked for whose post Slack took as its worker stopped is not posted again by the worker that runs the request again', async (t) => {
    const { expect } = t;
    const bot = await scaledOut(t, 'stop-mid-digest', {});
    const { slack, mintlify } = bot;
    mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);

    // Slack stores the digest at once, and answers after the worker's grace is over.
    slack.failNext('chat.postMessage', { delayMs: 30_000 });
    const digestPosted = slack.waitForCall('chat.postMessage', undefined, 20_000);
    const ack = await sendSlashCommand(bot.url, SECRETS.signingSecret, {
      text: 'digest',
      channel_id: 'C0DOCS',
      response_url: slack.responseUrl(),
    });
    expect(ack.status).toBe(200);
    await digestPosted;
    await bot.stopFirst();
    // The stopped worker's hold of the digest (its lease) lapses before another runs the request:
    // else that one is told another is being prepared, and never looks.
    await bot.withStore((store) =>
      expect.poll(() => leaseHeld(store.atomic, 'digest-request'), { timeout: 30_000 }).toBe(false),
    );

    const second = await bot.worker();
    await expect.poll(() => second.output(), { timeout: 30_000 }).toMatch(/not posting it again/);
    const digests = slack
      .history('C0DOCS')
      .filter(
        (message) =>
          (message.metadata as { event_type?: string })?.event_type === 'docs_agent_digest_on_request',
      );
    expect(digests).toHaveLength(1);
  });

  it('a reply to a finished job whose worker stopped as Mintlify took it: the round it may have started reaches the thread', async (t) => {
    const { expect } = t;
    const bot = await scaledOut(t, 'stop-mid-follow-up', { POLL_INTERVAL_MS: '200' });
    const { slack, mintlify } = bot;
    await sendSlashCommand(bot.url, SECRETS.signingSecret, {
      text: 'Document the import command',
      response_url: slack.responseUrl(),
    });
    const card = await slack.waitForCall('chat.postMessage', (call) => call.response.ok === true, 20_000);
    const cardTs = String(card.response.ts);
    const [jobId] = [...mintlify.jobs.keys()];
    const PR = 'https://github.com/acme/docs/pull/9';
    mintlify.setJob(jobId as string, { status: 'completed', prLink: PR });
    const news = () =>
      slack
        .callsTo('chat.postMessage')
        .filter((call) => call.args.thread_ts === cardTs && call.response.ok === true)
        .map((call) => String(call.args.text ?? ''));
    await expect.poll(news, { timeout: 20_000 }).toHaveLength(1);

    // Mintlify takes the reply (the job works again), and its answer never reaches the worker,
    // stopped meanwhile: the worker that runs the reply again cannot tell whether it was taken.
    mintlify.injectFault('sendMessage', { delayMs: 60_000, phase: 'body' });
    const said = { user: 'U0CAT', text: 'Also list the flags', thread_ts: cardTs };
    const { ts } = slack.seedMessage('C0CHANNEL', said);
    await sendEvent(bot.url, SECRETS.signingSecret, {
      type: 'message',
      channel: 'C0CHANNEL',
      channel_type: 'channel',
      ts,
      parent_user_id: 'U0BOT',
      ...said,
    });
    await expect.poll(() => mintlify.requestsFor('sendMessage').length, { timeout: 20_000 }).toBe(1);
    await bot.stopFirst();
    const second = await bot.worker();
    await second.printed(/cut short by a restart/, 30_000);
    // Followed again: Mintlify's job works on the reply, and its card says so.
    const edits = () =>
      slack.callsTo('chat.update').filter((call) => call.args.ts === cardTs && call.response.ok);
    const before = edits().length;
    await expect
      .poll(
        () =>
          edits()
            .slice(before)
            .some((call) => String(call.args.text).includes('Working on it')),
        {
          timeout: 20_000,
        },
      )
      .toBe(true);

    // The round the reply started ends: the thread is told, once.
    mintlify.setJob(jobId as string, { status: 'completed', prLink: PR });
    await expect
      .poll(() => news().filter((text) => text.includes('done with the latest replies')), { timeout: 20_000 })
      .toHaveLength(1);
    expect(mintlify.requestsFor('sendMessage')).toHaveLength(1);
  });
});
