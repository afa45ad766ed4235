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
import { tellInterruptedStarts } from './jobs/jobStarts.js';
import type { WorkQueue } from './queue/queue.js';
import { processRequest, type RequestsContext } from './requests/processRequest.js';
import type { SlackRequest } from './requests/slackRequest.js';
import type { UserNames } from './slack/plainText.js';
import type { SlackIdentity } from './slack/slackIdentity.js';

/** Slack requests worked on at once by one process: most of their time is spent waiting on Slack or Mintlify. */
const REQUEST_CONCURRENCY = 16;

export interface WorkerParts {
  config: Config;
  logger: Logger;
  jobs: JobsContext;
  userNames: UserNames;
  home: HomeRefresher;
  identity: SlackIdentity;
  /** A digest context whose waits stop when `signal` is aborted (the worker is closing). */
  digest: (signal: AbortSignal) => DigestContext;
  queues: {
    requests: WorkQueue<SlackRequest>;
    follow: WorkQueue<FollowCheck>;
    digest: WorkQueue<DigestJob>;
  };
}

/**
 * The worker role: the processors of every queue (Slack requests, job checks, the digest), the
 * digest's schedule, and what a start needs after a crash. Closing the queues stops it.
 */
export async function startWorker(parts: WorkerParts): Promise<void> {
  const { config, logger, jobs, queues } = parts;
  const requests: RequestsContext = {
    jobs,
    userNames: parts.userNames,
    digest: parts.digest,
    home: parts.home,
    bot: { userId: parts.identity.botUserId, botId: parts.identity.botId },
  };
  queues.requests.process((job, signal) => processRequest(requests, job, signal), {
    concurrency: REQUEST_CONCURRENCY,
  });
  queues.follow.process(followProcessor(jobs), followWorkerOptions(config.poll));
  queues.digest.process(digestProcessor(parts.digest), { concurrency: 1 });

  const resumed = await followUnfinishedJobs(jobs, queues.follow);
  if (resumed > 0) logger.info(`following ${resumed} unfinished job(s) the queue did not hold`);
  // Starts whose queue job is gone (the in-memory queue after a restart, a Redis emptied): told to the person.
  await tellInterruptedStarts(jobs).catch((error: unknown) =>
    logger.warn(`could not look for interrupted job starts: ${String(error)}`),
  );
  await scheduleDigest(parts.digest(new AbortController().signal), queues.digest);
}
