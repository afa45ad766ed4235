import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger, webApi } from '@slack/bolt';
import type { Config } from './config.js';
import { createDigestContext, type DigestContext } from './digest/digestContext.js';
import {
  type DigestJob,
  digestProcessor,
  type DigestTries,
  scheduleDigest,
} from './digest/digestSchedule.js';
import { HomeRefresher } from './home/homeRefresher.js';
import { publishHome, type ShownHomes } from './home/publishHome.js';
import type { InFlight } from './inFlight.js';
import {
  type FollowCheck,
  followActiveJob,
  followProcessor,
  followUnfinishedJobs,
  followWorkerOptions,
} from './jobs/followJobs.js';
import { type JobRecord, JobRecords } from './jobs/jobRecord.js';
import { JobStarts } from './jobs/jobStarts.js';
import type { JobsContext } from './jobs/jobsContext.js';
import { MintlifyClient, type MintlifyClientOptions } from './mintlify/index.js';
import {
  PREVIEW_LIMITER,
  type PreviewCheck,
  type PreviewRequest,
  previewProcessor,
  previewStatusProcessor,
  requestPreview,
  resumePreviews,
} from './previews/previews.js';
import type { WorkQueue } from './queue/queue.js';
import { processRequest, type RequestsContext } from './requests/processRequest.js';
import type { SlackRequest } from './requests/slackRequest.js';
import type { SlackIdentity } from './slack/slackIdentity.js';
import type { SlackTokenState } from './slack/slackToken.js';
import { cachedUserNames } from './slack/userNames.js';
import { RateLedger } from './store/rateLedger.js';
import { redisRefusalOf } from './store/storeErrors.js';
import type { Store } from './store/store.js';
import { USER_AGENT } from './version.js';

const REQUEST_CONCURRENCY = 16;
/** At stop, how long the claims Redis may have taken without answering get to be withdrawn (jobStarts.ts). */
const WITHDRAW_AT_STOP_MS = 250;

/** What tests shorten or lengthen in the worker (see `DocsAgentOptions`). */
export interface WorkerTuning {
  /** The Mintlify client's retry waits and timeouts. */
  mintlify?: Partial<Pick<MintlifyClientOptions, 'retry' | 'timeouts' | 'sleep'>>;
  /** Deployments read more often, a request Mintlify did not answer asked again sooner, and the preview limiter's window. */
  previews?: {
    statusEveryMs?: number;
    unansweredWaitMs?: number;
    limiter?: { max: number; durationMs: number };
  };
  /**
   * How often what a job's start or follow-up leaves for Redis to answer (its record, its first
   * check, a follow-up's answer, its card moved to a DM) is tried again while Redis is away (default 2 s).
   */
  recordAgainEveryMs?: number;
  /** How long a job may read as it ended before, after a follow-up (default 2 minutes). */
  followUpGraceMs?: number;
  /** How long a note of a fix holds its digest between renewals (default 6 s): tests shorten it. */
  fixNoteHoldMs?: number;
  /** The digest's waits for the analytics rate limit. */
  digest?: DigestContext['collect'];
  /** How often a digest job is tried (default 4 times, a minute apart and more; then again an hour later). */
  digestTries?: DigestTries;
  /** How often the worker makes sure the queues hold what they should (default 10 minutes). */
  reconcileEveryMs?: number;
  /** How far apart a person's Home tab refreshes are at least (default 3 s). */
  homeRefreshMinIntervalMs?: number;
}

/** What the worker shares with the rest of its process (app.ts). */
export interface WorkerParts {
  config: Config;
  logger: Logger;
  /** For what people wait for: starts, steering, answers to messages and forms. */
  slack: webApi.WebClient;
  /** For the rest (the follower's card edits and news, previews, Home tabs, the digest): its 429s pause only it. */
  backgroundSlack: webApi.WebClient;
  /**
   * For posts found again by their mark (the scheduled digest, job cards and notices): each call is
   * sent once, since one sent again blind after a lost answer may post it twice. It pauses for no 429.
   */
  slackOnce: webApi.WebClient;
  /** Whether Slack takes the bot's token, as the clients' calls find. */
  slackToken?: SlackTokenState;
  store: Store;
  identity: SlackIdentity;
  now: () => Date;
  queues: {
    requests: WorkQueue<SlackRequest>;
    follow: WorkQueue<FollowCheck>;
    digest: WorkQueue<DigestJob>;
    previews: WorkQueue<PreviewRequest>;
    previewStatus: WorkQueue<PreviewCheck>;
  };
  /** Work outside the queues (Home tab publishes, the reconciliation): stopping waits for it a little. */
  background: InFlight;
  /**
   * Aborted when stopping runs past its grace: a wait between Mintlify retries ends then, so the
   * job it holds goes back to the queue at once rather than staying locked.
   */
  retryWaits: AbortSignal;
  tuning?: WorkerTuning;
}

// A job whose check was lost (its queue job failed for good, or a Redis emptied) is followed again
// within this; each run costs one add per unfinished job, ignored when its check is there.
const RECONCILE_EVERY_MS = 10 * 60_000;
/** How long stopping waits for a reconciliation under way. */
const RECONCILE_AT_STOP_MS = 1_000;

export interface Worker {
  /** The job use cases' context (tests read its records). */
  readonly jobs: JobsContext;
  /**
   * Makes sure what the queues should hold is there: a check for every unfinished job, the digest's
   * scheduler and catch-up. Run once the process takes requests, then every 10 minutes.
   */
  reconcile(): Promise<void>;
  /**
   * Before the queues close: stops the periodic reconciliation (waiting for a run under way) and
   * the Home tab's refreshes. The queues' close stops the processors.
   */
  stop(): Promise<void>;
  /** Once the queues are closed: names the jobs still not recorded, and closes the Mintlify client. */
  close(): Promise<void>;
}

/**
 * The worker role: the processors of every queue (Slack requests, job checks, previews and their
 * status, the digest), the digest's schedule, the Home tabs' refreshes, and the follow-up of every
 * unfinished job. Closing the queues stops it.
 */
export function startWorker(parts: WorkerParts): Worker {
  const { config, logger, slack, store, queues, now } = parts;
  const tuning = parts.tuning ?? {};
  const mintlify = new MintlifyClient({
    apiKey: config.mintlify.apiKey,
    baseUrl: config.mintlify.apiUrl,
    userAgent: USER_AGENT,
    sleep: (ms) => sleepFor(ms, undefined, { signal: parts.retryWaits }),
    stopping: parts.retryWaits,
    ...tuning.mintlify,
  });
  const jobs: JobsContext = {
    config,
    mintlify,
    store,
    records: new JobRecords(store, config.jobRetentionMs),
    starts: new JobStarts(
      store,
      tuning.recordAgainEveryMs ? { recordAgainEveryMs: tuning.recordAgainEveryMs } : {},
    ),
    ledger: new RateLedger(store, () => now().getTime()),
    slack,
    slackOnce: parts.slackOnce,
    ...(parts.slackToken ? { slackToken: parts.slackToken } : {}),
    botId: parts.identity.botId,
    logger,
    now,
    stopping: parts.retryWaits,
    ...(tuning.followUpGraceMs === undefined ? {} : { followUpGraceMs: tuning.followUpGraceMs }),
    onJobActive: (jobId) => followActiveJob(jobs, queues.follow, jobId),
    onJobChanged: (record) => home.refresh(record.requestedBy),
    ...(config.previews
      ? { onJobFinished: (record: JobRecord) => requestPreview(jobs, queues.previews, record) }
      : {}),
  };
  // The same, on the Slack client of background work.
  const following: JobsContext = { ...jobs, slack: parts.backgroundSlack };
  const shownHomes: ShownHomes = new Map();
  const home = new HomeRefresher({
    publish: (user, refresh) => publishHome(following, user, refresh ? shownHomes : undefined),
    logger,
    ...(tuning.homeRefreshMinIntervalMs === undefined
      ? {}
      : { minIntervalMs: tuning.homeRefreshMinIntervalMs }),
    track: (work) => parts.background.run(work),
  });
  const digest = (signal: AbortSignal) =>
    createDigestContext({
      config,
      mintlify,
      store,
      slack: parts.backgroundSlack,
      slackOnce: parts.slackOnce,
      botId: parts.identity.botId,
      logger,
      now,
      shutdown: signal,
      ...(tuning.digest ? { collect: tuning.digest } : {}),
    });

  const requests: RequestsContext = {
    jobs,
    backgroundSlack: parts.backgroundSlack,
    userNames: cachedUserNames(slack, logger),
    digest,
    home,
    bot: { userId: parts.identity.botUserId, botId: parts.identity.botId },
    withdrawn: (job) => queues.requests.withdrawn(job),
    ...(tuning.fixNoteHoldMs ? { fixNoteHoldMs: tuning.fixNoteHoldMs } : {}),
  };
  queues.requests.process((job, signal) => processRequest(requests, job, signal), {
    concurrency: REQUEST_CONCURRENCY,
  });
  queues.follow.process(followProcessor(following), followWorkerOptions(config.poll));
  // Only a process with the digest's settings takes its jobs: one without them (another service's
  // environment, a deploy halfway) leaves them to the others rather than drop them.
  if (config.digest.channel && config.digest.cron) {
    queues.digest.process(digestProcessor(digest, tuning.digestTries), { concurrency: 1 });
  }
  // Mintlify allows 5 preview deployments a minute per organization: one limiter for every process.
  const previews = {
    ...following,
    statusQueue: queues.previewStatus,
    ...(tuning.previews?.statusEveryMs ? { statusEveryMs: tuning.previews.statusEveryMs } : {}),
    ...(tuning.previews?.unansweredWaitMs ? { unansweredWaitMs: tuning.previews.unansweredWaitMs } : {}),
  };
  queues.previews.process(previewProcessor(previews), {
    concurrency: 1,
    limiter: tuning.previews?.limiter ?? PREVIEW_LIMITER,
  });
  queues.previewStatus.process(previewStatusProcessor(previews), { concurrency: 4 });

  let running: Promise<void> | undefined;
  const reconcile = (quiet: boolean) => {
    running ??= (async () => {
      const resumed = await followUnfinishedJobs(following, queues.follow);
      if (resumed > 0) logger.info(`following ${resumed} unfinished job(s) the queue did not hold`);
      if (config.previews) {
        const previewsResumed = await resumePreviews(previews, queues.previews);
        if (previewsResumed > 0) {
          logger.info(`following ${previewsResumed} preview deployment(s) the queues did not hold`);
        }
      }
      await scheduleDigest(digest(new AbortController().signal), queues.digest, {
        quiet,
        ...(tuning.digestTries ? { tries: tuning.digestTries } : {}),
      });
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    reconcile(true).catch((error: unknown) =>
      logger.warn(`could not check the queues: ${redisRefusalOf(error) ?? String(error)}`),
    );
  }, tuning.reconcileEveryMs ?? RECONCILE_EVERY_MS);
  timer.unref();
  return {
    jobs,
    reconcile: () => reconcile(false),
    async stop() {
      clearInterval(timer);
      // A reconciliation under way finishes first (its adds still land), but a Redis that hangs
      // must not hold the stop's grace back: the queues refuse its adds once they are closed.
      await Promise.race([
        running?.catch(() => {}),
        sleepFor(RECONCILE_AT_STOP_MS, undefined, { ref: false }),
      ]);
      home.stop();
    },
    async close() {
      for (const jobId of await jobs.starts.stop(WITHDRAW_AT_STOP_MS)) {
        logger.error(
          `job ${jobId} was created at Mintlify while Redis was away and is still not recorded: the bot is stopping, ` +
            'so it is not followed',
        );
      }
      await mintlify.close();
    },
  };
}
