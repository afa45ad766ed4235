import { setTimeout as sleepFor } from 'node:timers/promises';
import { type Logger, webApi } from '@slack/bolt';
import type { Config } from './config.js';
import { createDigestContext, type DigestContext } from './digest/digestContext.js';
import { DIGEST_QUEUE, type DigestJob } from './digest/digestSchedule.js';
import { HomeRefresher } from './home/homeRefresher.js';
import { publishHome } from './home/publishHome.js';
import { InFlight } from './inFlight.js';
import { FOLLOW_QUEUE, type FollowCheck, followJob } from './jobs/followJobs.js';
import { type JobRecord, JobRecords } from './jobs/jobRecord.js';
import { JobStarts } from './jobs/jobStarts.js';
import type { JobsContext } from './jobs/jobsContext.js';
import { MintlifyClient, type MintlifyClientOptions } from './mintlify/index.js';
import {
  PREVIEW_QUEUE,
  PREVIEW_STATUS_QUEUE,
  type PreviewCheck,
  type PreviewRequest,
  requestPreview,
} from './previews/previews.js';
import { openMemoryQueues } from './queue/memoryQueues.js';
import type { Queues } from './queue/queue.js';
import { REQUESTS_QUEUE, type SlackRequest } from './requests/slackRequest.js';
import { verifySlackToken } from './slack/slackIdentity.js';
import { cachedUserNames } from './slack/userNames.js';
import { RateLedger } from './store/rateLedger.js';
import { openStore, type Store } from './store/store.js';
import { USER_AGENT } from './version.js';
import { createWeb, type Web } from './web.js';
import { startWorker, type Worker, type WorkerParts } from './worker.js';

/** Slack's own default retries for ~30 minutes; a person waiting on a card should not. */
const SLACK_RETRIES: webApi.RetryOptions = { retries: 4, factor: 2, minTimeout: 500, maxTimeout: 8_000 };
/** What running work gets to finish when the bot is told to stop (platforms kill at 10 s or so). */
const STOP_GRACE_MS = 7_000;
// Longer than the 5 minutes in which Bolt accepts a request's signature: a replayed request finds
// its queue job (named by its delivery) and is not queued again.
const KEEP_REQUESTS_MS = 10 * 60_000;

export interface DocsAgentOptions {
  logger: Logger;
  /** Tests shorten the Slack client's and Mintlify client's retry waits. */
  slackRetries?: webApi.RetryOptions;
  mintlify?: Partial<Pick<MintlifyClientOptions, 'retry' | 'timeouts' | 'sleep'>>;
  /** Tests read deployments more often, and shorten the preview limiter's window. */
  previews?: WorkerParts['previews'];
  /** Tests lengthen how often a job created while Redis was away is tried again (default 2 s). */
  recordAgainEveryMs?: number;
  /** Tests shorten the digest's waits for the analytics rate limit. */
  digest?: DigestContext['collect'];
  now?: () => Date;
}

/** The bot in one process: the roles SERVICES names, on one store and one set of queues. */
export interface DocsAgent {
  readonly store: Store;
  readonly context: { jobs: JobsContext };
  /** Starts the worker (if this process runs one), then takes Slack requests (if it runs the web role). */
  start(): Promise<{ port: number | undefined }>;
  /** Stops taking requests, closes the workers (running work finishes or goes back to the queue), closes connections. */
  stop(): Promise<void>;
  /** Resolves once every queued Slack request has been worked off (for tests and the sandbox). */
  drained(timeoutMs?: number): Promise<void>;
  /** How many checks of jobs, and steps of their preview deployments, are pending. */
  following(): Promise<number>;
}

export async function createDocsAgent(config: Config, options: DocsAgentOptions): Promise<DocsAgent> {
  const { logger } = options;
  const now = options.now ?? (() => new Date());
  const slack = new webApi.WebClient(config.slack.botToken, {
    ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
    retryConfig: options.slackRetries ?? SLACK_RETRIES,
    logger,
  });
  // Both at once: each is a network round trip, and either failing stops the start.
  const [opened, verified] = await Promise.allSettled([
    openStore(config.store, logger, { retentionMs: config.jobRetentionMs }),
    verifySlackToken(slack, logger),
  ]);
  if (opened.status === 'rejected') throw opened.reason;
  const store = opened.value;
  if (verified.status === 'rejected') {
    await store.close();
    throw verified.reason;
  }
  const identity = verified.value;
  if (store.kind === 'memory') {
    logger.warn('REDIS_URL is not set: state is kept in memory and every job thread is forgotten on restart');
  }

  // BullMQ is loaded only with Redis: a bot without it starts without BullMQ's code.
  const queues: Queues = store.redis
    ? (await import('./queue/bullmqQueues.js')).openBullmqQueues({
        client: store.redis,
        prefix: config.store.namespace,
        logger,
        lockMs: config.queueLockMs,
      })
    : openMemoryQueues({ logger });
  const requests = queues.queue<SlackRequest>(REQUESTS_QUEUE, { keepCompletedMs: KEEP_REQUESTS_MS });
  // A check that failed for good is dropped at once, so its job can be followed again (see worker.ts).
  const follow = queues.queue<FollowCheck>(FOLLOW_QUEUE, { keepFailedMs: 0 });
  const digestQueue = queues.queue<DigestJob>(DIGEST_QUEUE);
  const previewQueue = queues.queue<PreviewRequest>(PREVIEW_QUEUE, { keepFailedMs: 0 });
  const previewStatus = queues.queue<PreviewCheck>(PREVIEW_STATUS_QUEUE, { keepFailedMs: 0 });

  // Aborted when stopping work runs past its grace: a wait between Mintlify retries ends then, so
  // the job it holds goes back to the queue at once rather than staying locked.
  const retryWaits = new AbortController();
  const mintlify = new MintlifyClient({
    apiKey: config.mintlify.apiKey,
    baseUrl: config.mintlify.apiUrl,
    userAgent: USER_AGENT,
    sleep: (ms) => sleepFor(ms, undefined, { signal: retryWaits.signal }),
    ...options.mintlify,
  });
  // Work outside the queues (Home tab publishes, the queues' reconciliation): stopping waits for it a little.
  const background = new InFlight();
  const jobs: JobsContext = {
    config,
    mintlify,
    store,
    records: new JobRecords(store, config.jobRetentionMs),
    starts: new JobStarts(
      store,
      options.recordAgainEveryMs ? { recordAgainEveryMs: options.recordAgainEveryMs } : {},
    ),
    ledger: new RateLedger(store.atomic, () => now().getTime()),
    slack,
    logger,
    now,
    onJobActive: (jobId) =>
      void followJob(jobs, follow, jobId).catch((error: unknown) =>
        logger.error(`job ${jobId} could not be queued for following: ${String(error)}`),
      ),
    onJobChanged: (record) => home.refresh(record.requestedBy),
    ...(config.previews
      ? { onJobFinished: (record: JobRecord) => requestPreview(previewQueue, record) }
      : {}),
  };
  const home = new HomeRefresher({
    publish: (user) => publishHome(jobs, user),
    logger,
    track: (work) => background.run(work),
  });
  const digestFor = (signal: AbortSignal) =>
    createDigestContext({
      config,
      mintlify,
      store,
      slack,
      logger,
      now,
      shutdown: signal,
      ...(options.digest ? { collect: options.digest } : {}),
    });

  const web: Web | undefined = config.services.web
    ? createWeb(config, {
        logger,
        identity,
        requests,
        ...(options.slackRetries ? { slackRetries: options.slackRetries } : {}),
      })
    : undefined;

  let worker: Worker | undefined;
  let stopping = false;
  const closeAll = async () => {
    await worker?.stop();
    home.stop();
    const cutWaits = setTimeout(() => retryWaits.abort(new Error('the bot is stopping')), STOP_GRACE_MS);
    await queues.close(STOP_GRACE_MS);
    clearTimeout(cutWaits);
    retryWaits.abort(new Error('the bot is stopping'));
    await background.drain(1_000);
    for (const jobId of jobs.starts.dropUnrecorded()) {
      logger.error(
        `job ${jobId} was created at Mintlify while Redis was away and is still not recorded: the bot is stopping, ` +
          'so it is not followed',
      );
    }
    await Promise.allSettled([mintlify.close(), store.close()]);
  };

  return {
    store,
    context: { jobs },
    async start() {
      try {
        if (config.services.worker) {
          worker = startWorker({
            config,
            logger,
            jobs,
            userNames: cachedUserNames(slack, logger),
            home,
            identity,
            digest: digestFor,
            queues: { requests, follow, digest: digestQueue, previews: previewQueue, previewStatus },
            ...(options.previews ? { previews: options.previews } : {}),
          });
        }
        const { port } = web ? await web.start() : { port: undefined };
        if (stopping) {
          await web?.stop(); // told to stop while the receiver started: stop() could not close it yet
          return { port };
        }
        if (!web)
          logger.info('docs-agent worker is running (SERVICES=worker: no Slack requests are taken here)');
        // After the web role listens: with many unfinished jobs this takes a while, and Slack need not wait.
        if (worker) {
          const reconciling = worker
            .reconcile()
            .catch((error: unknown) => logger.error(`could not set up the queues' work: ${String(error)}`));
          void background.run(() => reconciling);
        }
        return { port };
      } catch (error) {
        await web?.stop();
        await closeAll();
        throw error;
      }
    },
    async stop() {
      stopping = true;
      await web?.stop();
      await closeAll();
    },
    async drained(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { waiting, active, delayed } = await requests.counts();
        if (waiting + active + delayed === 0 && background.size === 0) return;
        if (Date.now() > deadline) throw new Error(`requests still queued after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async following() {
      const counts = await Promise.all([follow, previewQueue, previewStatus].map((queue) => queue.counts()));
      return counts.reduce((sum, { waiting, active, delayed }) => sum + waiting + active + delayed, 0);
    },
  };
}
