import type { Logger } from '@slack/bolt';
import type { Config } from './config.js';
import type { DigestContext } from './digest/digestContext.js';
import { type DigestJob, digestProcessor, scheduleDigest } from './digest/digestSchedule.js';
import type { HomeRefresher } from './home/homeRefresher.js';
import {
  type FollowCheck,
  followProcessor,
  followUnfinishedJobs,
  followWorkerOptions,
} from './jobs/followJobs.js';
import type { JobsContext } from './jobs/jobsContext.js';
import {
  PREVIEW_LIMITER,
  type PreviewCheck,
  type PreviewRequest,
  previewProcessor,
  previewStatusProcessor,
} from './previews/previews.js';
import type { WorkQueue } from './queue/queue.js';
import { processRequest, type RequestsContext } from './requests/processRequest.js';
import type { SlackRequest } from './requests/slackRequest.js';
import type { UserNames } from './slack/plainText.js';
import type { SlackIdentity } from './slack/slackIdentity.js';

const REQUEST_CONCURRENCY = 16;

export interface WorkerParts {
  config: Config;
  logger: Logger;
  jobs: JobsContext;
  userNames: UserNames;
  home: HomeRefresher;
  identity: SlackIdentity;
  /** Tests read deployments more often, and shorten the preview limiter's window. */
  previews?: { statusEveryMs?: number; limiter?: { max: number; durationMs: number } };
  /** A digest context whose waits stop when `signal` is aborted (the worker is closing). */
  digest: (signal: AbortSignal) => DigestContext;
  queues: {
    requests: WorkQueue<SlackRequest>;
    follow: WorkQueue<FollowCheck>;
    digest: WorkQueue<DigestJob>;
    previews: WorkQueue<PreviewRequest>;
    previewStatus: WorkQueue<PreviewCheck>;
  };
}

// A job whose check was lost (its queue job failed for good, or a Redis emptied) is followed again
// within this; each run costs one add per unfinished job, ignored when its check is there.
const RECONCILE_EVERY_MS = 10 * 60_000;

export interface Worker {
  /**
   * Makes sure what the queues should hold is there: a check for every unfinished job, the digest's
   * scheduler and catch-up. Run once the process takes requests, then every 10 minutes.
   */
  reconcile(): Promise<void>;
  /** Stops the periodic reconciliation, waiting for a run under way (the queues' close stops the processors). */
  stop(): Promise<void>;
}

/**
 * The worker role: the processors of every queue (Slack requests, job checks, the digest), the
 * digest's schedule, and the follow-up of every unfinished job. Closing the queues stops it.
 */
export function startWorker(parts: WorkerParts): Worker {
  const { config, logger, jobs, queues } = parts;
  const requests: RequestsContext = {
    jobs,
    userNames: parts.userNames,
    digest: parts.digest,
    home: parts.home,
    bot: { userId: parts.identity.botUserId, botId: parts.identity.botId },
    withdrawn: (job) => queues.requests.withdrawn(job),
  };
  queues.requests.process((job, signal) => processRequest(requests, job, signal), {
    concurrency: REQUEST_CONCURRENCY,
  });
  queues.follow.process(followProcessor(jobs), followWorkerOptions(config.poll));
  queues.digest.process(digestProcessor(parts.digest), { concurrency: 1 });
  // Mintlify allows 5 preview deployments a minute per organization: one limiter for every process.
  const previews = {
    ...jobs,
    statusQueue: queues.previewStatus,
    ...(parts.previews?.statusEveryMs ? { statusEveryMs: parts.previews.statusEveryMs } : {}),
  };
  queues.previews.process(previewProcessor(previews), {
    concurrency: 1,
    limiter: parts.previews?.limiter ?? PREVIEW_LIMITER,
  });
  queues.previewStatus.process(previewStatusProcessor(previews), { concurrency: 4 });

  let running: Promise<void> | undefined;
  const reconcile = (quiet: boolean) => {
    running ??= (async () => {
      const resumed = await followUnfinishedJobs(jobs, queues.follow);
      if (resumed > 0) logger.info(`following ${resumed} unfinished job(s) the queue did not hold`);
      await scheduleDigest(parts.digest(new AbortController().signal), queues.digest, { quiet });
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    reconcile(true).catch((error: unknown) => logger.warn(`could not check the queues: ${String(error)}`));
  }, RECONCILE_EVERY_MS);
  timer.unref();
  return {
    reconcile: () => reconcile(false),
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
