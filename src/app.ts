import { setMaxListeners } from 'node:events';
import { type Logger, webApi } from '@slack/bolt';
import type { Config } from './config.js';
import type { DigestJob } from './digest/digestSchedule.js';
import { InFlight } from './inFlight.js';
import type { FollowCheck } from './jobs/followJobs.js';
import type { JobsContext } from './jobs/jobsContext.js';
import type { PreviewCheck, PreviewRequest } from './previews/previews.js';
import { openMemoryQueues } from './queue/memoryQueues.js';
import type { Queues } from './queue/queue.js';
import {
  DIGEST_QUEUE,
  FOLLOW_QUEUE,
  PREVIEW_QUEUE,
  PREVIEW_STATUS_QUEUE,
  REQUESTS_QUEUE,
} from './queue/queueNames.js';
import type { SlackRequest } from './requests/slackRequest.js';
import { verifySlackToken } from './slack/slackIdentity.js';
import { SENT_ONCE } from './slack/postedMessages.js';
import { SlackTokenState, WatchedWebClient } from './slack/slackToken.js';
import { openStore, type Store } from './store/store.js';
import { redisRefusalOf } from './store/storeErrors.js';
import { STALE_PRIMARY, watchReadOnly } from './store/readOnlyWatch.js';
import { createWeb, type Web } from './web.js';
import type { Worker, WorkerTuning } from './worker.js';
import { announceApp, announceWorker, watchForWorkers } from './workerPresence.js';

/**
 * Four tries after the first, 0.5-8 s apart (Slack's own default goes on for ~30 minutes; a person
 * waiting on a card should not). A 429 is waited out for its Retry-After on top.
 */
const SLACK_RETRIES: webApi.RetryOptions = { retries: 4, factor: 2, minTimeout: 500, maxTimeout: 8_000 };
/** What running work gets to finish when the bot is told to stop (platforms kill at 10 s or so). */
const STOP_GRACE_MS = 7_000;
// Longer than the 5 minutes in which Bolt accepts a request's signature: a replayed request finds
// its queue job (named by its delivery) and is not queued again.
const KEEP_REQUESTS_MS = 10 * 60_000;

export interface DocsAgentOptions extends WorkerTuning {
  logger: Logger;
  /** Tests shorten the Slack client's retry waits. */
  slackRetries?: webApi.RetryOptions;
  /** How long the queues' workers get to connect to Redis before the log says which could not (default 15 s). */
  workersReadyWithinMs?: number;
  /** How often a process with the web role alone looks for a worker (default a minute). */
  workerWatchMs?: number;
  /** How long Socket Mode holds an event the queue could not take before it is given up (default 10 minutes). */
  holdEventForMs?: number;
  /** Tests shorten what running work gets to finish when the bot is told to stop (default 7 s). */
  stopGraceMs?: number;
  /**
   * Told when the bot cannot go on (Slack refused SLACK_APP_TOKEN as Socket Mode reconnected; Redis
   * answers as a replica a minute on, after a failover): the caller stops it.
   */
  onFailure?: (error: Error) => void;
  /** Tests shorten how long Redis may answer as a read-only replica before the bot stops (default a minute). */
  readOnlyLimitMs?: number;
  now?: () => Date;
}

/** The bot in one process: the roles SERVICES names, on one store and one set of queues. */
export interface DocsAgent {
  readonly store: Store;
  /** The worker's job context, once it has started (a process without the worker role has none). */
  readonly context: { jobs: JobsContext };
  /**
   * Takes Slack requests (if this process runs the web role), then starts the worker (if it runs
   * one): the worker's code loads once the receiver listens, and requests wait on the queue meanwhile.
   */
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
  // Both clients tell one state whether Slack takes the token (a reinstall issues a new one).
  const slackToken = new SlackTokenState(logger);
  const slackClient = (sending: webApi.WebClientOptions = {}) =>
    new WatchedWebClient(
      config.slack.botToken,
      {
        ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
        retryConfig: options.slackRetries ?? SLACK_RETRIES,
        logger,
        ...sending,
      },
      slackToken,
    );
  // Two clients: a 429 pauses every call of the client that got it until its Retry-After, and
  // what a person waits for (a card, an answer) must not wait behind the follower's card edits,
  // Home tabs or the digest.
  const slack = slackClient();
  const backgroundSlack = slackClient();
  // And one that sends each post once, for the posts that are looked for before being posted again.
  const slackOnce = slackClient(SENT_ONCE);
  // BullMQ is loaded only with Redis (a bot without it starts without BullMQ's code), and while the
  // store connects and Slack answers.
  const bullmq = config.store.redisUrl ? import('./queue/bullmqQueues.js') : undefined;
  bullmq?.catch(() => {}); // awaited below, unless the start fails first
  // Slack is asked for the bot's ids while the store opens and the receiver starts to listen: a
  // request that comes before the answer waits for it a moment (the receiver's authorize), and a
  // wrong token stops the start all the same, in start().
  const identity = verifySlackToken(slack, logger);
  identity.catch(() => {}); // awaited in start(), unless the store fails first
  // A failover that left this process's connections on a replica: it stops, to start again on the primary.
  const readOnly = watchReadOnly({
    ...(options.readOnlyLimitMs ? { limitMs: options.readOnlyLimitMs } : {}),
    onStale: () => {
      logger.error(STALE_PRIMARY);
      options.onFailure?.(new Error(STALE_PRIMARY));
    },
  });
  const store = await openStore(config.store, logger, {
    retentionMs: config.jobRetentionMs,
    onCommandError: readOnly,
  });
  slackToken.share(store, config.slack.botToken);
  if (store.kind === 'memory') {
    logger.warn('REDIS_URL is not set: state is kept in memory and every job thread is forgotten on restart');
  }

  const queues: Queues =
    store.redis && bullmq
      ? (await bullmq).openBullmqQueues({
          client: store.redis,
          prefix: config.store.namespace,
          logger,
          lockMs: config.queueLockMs,
          onError: readOnly,
          ...(options.workersReadyWithinMs ? { workersReadyWithinMs: options.workersReadyWithinMs } : {}),
        })
      : openMemoryQueues({ logger });
  const requests = queues.queue<SlackRequest>(REQUESTS_QUEUE, { keepCompletedMs: KEEP_REQUESTS_MS });
  // A check that failed for good is dropped at once, so its job can be followed again (see worker.ts).
  const follow = queues.queue<FollowCheck>(FOLLOW_QUEUE, { keepFailedMs: 0 });
  // A digest that failed for good is dropped at once too: the catch-up of its week, named after it,
  // can be queued again (an hour after its last failed try: see digestSchedule.ts).
  const digestQueue = queues.queue<DigestJob>(DIGEST_QUEUE, { keepFailedMs: 0 });
  const previewQueue = queues.queue<PreviewRequest>(PREVIEW_QUEUE, { keepFailedMs: 0 });
  const previewStatus = queues.queue<PreviewCheck>(PREVIEW_STATUS_QUEUE, { keepFailedMs: 0 });

  const stopGraceMs = options.stopGraceMs ?? STOP_GRACE_MS;
  // Aborted when stopping work runs past its grace: a wait between Mintlify retries ends then.
  const retryWaits = new AbortController();
  // Every wait between Mintlify's retries, and every write waiting for Redis, listens to it while it
  // lasts (and stops when it ends): dozens at once in an outage are no leak, though past Node's
  // default of 10 it prints one. Bounded still, so a real leak would show.
  setMaxListeners(1_000, retryWaits.signal);
  // Work outside the queues (Home tab publishes, the queues' reconciliation): stopping waits for it a little.
  const background = new InFlight();

  const web: Web | undefined = config.services.web
    ? createWeb(config, {
        logger,
        identity,
        requests,
        store,
        ...(options.slackRetries ? { slackRetries: options.slackRetries } : {}),
        ...(options.holdEventForMs ? { holdEventForMs: options.holdEventForMs } : {}),
        ...(options.onFailure ? { onFailure: options.onFailure } : {}),
      })
    : undefined;

  let worker: Worker | undefined;
  let workerStarted: Promise<void> | undefined;
  // The worker says it runs; the web role alone looks for one (see workerPresence.ts).
  let presence: { stop(): Promise<void> } | undefined;
  // The Slack app this process serves, said on Redis beside the other deployments' (see workerPresence.ts).
  let appPresence: { stop(): Promise<void> } | undefined;
  let stopping = false;
  // Set once a stop has closed the receiver: every request this process took is on the queue by then.
  let webStopped = false;
  // Running work's grace counts from the stop: the receiver's and the worker's own stops come out of
  // it, so the hand-back still lands before main.ts's hard exit at 9.5 s.
  let graceEndsAt = Number.POSITIVE_INFINITY;
  const closeAll = async () => {
    graceEndsAt = Math.min(graceEndsAt, Date.now() + stopGraceMs);
    await presence?.stop();
    await appPresence?.stop();
    await worker?.stop();
    const graceMs = Math.max(0, graceEndsAt - Date.now());
    const cutWaits = setTimeout(() => retryWaits.abort(new Error('the bot is stopping')), graceMs);
    logger.debug(`closing the queues: running work has ${(graceMs / 1000).toFixed(1)} s to finish`);
    await queues.close(graceMs);
    clearTimeout(cutWaits);
    retryWaits.abort(new Error('the bot is stopping'));
    await background.drain(1_000);
    await worker?.close().catch(() => {}); // on the store, before it closes
    await store.close().catch(() => {});
  };

  return {
    store,
    get context() {
      if (!worker) throw new Error('this process runs no worker (SERVICES), or it has not started yet');
      return { jobs: worker.jobs };
    },
    async start() {
      try {
        // Socket Mode acknowledges an event whose authorize failed, and Slack never sends it again:
        // its socket opens once the token is confirmed. Over HTTP such a request gets an error.
        if (config.slack.socketMode) await identity;
        const { port } = web ? await web.start() : { port: undefined };
        // A wrong SLACK_BOT_TOKEN stops the start here.
        const ids = await identity;
        if (store.kind === 'redis' && !stopping) {
          appPresence = announceApp(store, ids, config.store.namespace, logger);
        }
        // The worker's code loads once the receiver listens; requests wait on the queue meanwhile. Once
        // begun, it starts even if the bot is told to stop meanwhile: what was queued (in memory, without
        // Redis) is taken up, then finishes or goes back to the queue like any running work. Without
        // Redis it starts even when the stop came first, until the receiver has closed: a request taken
        // meanwhile was acknowledged ("its card will appear here"), and no other process holds it.
        const needed = !stopping || (store.kind === 'memory' && !webStopped);
        if (config.services.worker && needed) {
          workerStarted = import('./worker.js').then(({ startWorker }) => {
            worker = startWorker({
              config,
              logger,
              slack,
              backgroundSlack,
              slackOnce,
              slackToken,
              store,
              identity: ids,
              now,
              queues: { requests, follow, digest: digestQueue, previews: previewQueue, previewStatus },
              background,
              retryWaits: retryWaits.signal,
              tuning: options,
            });
          });
          await workerStarted;
        }
        if (stopping) {
          await web?.stop(); // told to stop while the receiver started: stop() could not close it yet
          return { port };
        }
        if (worker) {
          logger.info(
            web
              ? 'docs-agent worker is running'
              : 'docs-agent worker is running (SERVICES=worker: no Slack requests are taken here)',
          );
          presence = announceWorker(store);
          // After the web role listens: with many unfinished jobs this takes a while, and Slack need not wait.
          const reconciling = worker
            .reconcile()
            // Redis's refusal in plain words (a full Redis's reply names a Lua script by its hash).
            .catch((error: unknown) =>
              logger.error(`could not set up the queues' work: ${redisRefusalOf(error) ?? String(error)}`),
            );
          void background.run(() => reconciling);
        } else {
          logger.info(
            'docs-agent runs the web role only (SERVICES=web): Slack requests are queued for the workers',
          );
          presence = watchForWorkers(store, requests, logger, options.workerWatchMs);
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
      graceEndsAt = Date.now() + stopGraceMs;
      await web?.stop();
      webStopped = true;
      await workerStarted?.catch(() => {});
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
