import type { DigestContext } from '../digest/digestContext.js';
import type { HomeRefresher } from '../home/homeRefresher.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { StartAwaitsError } from '../jobs/jobStarts.js';
import { type SteerJobOutcome, steerJob } from '../jobs/steerJob.js';
import type { BotIdentity } from '../jobs/threadContext.js';
import type { ProcessorResult, QueueJob } from '../queue/queue.js';
import type { UserNames } from '../slack/plainText.js';
import { respondVia } from '../slack/respond.js';
import { answerCommand } from './answerCommand.js';
import { answerFollowUp, EDIT_ANSWERED } from './answerFollowUp.js';
import { answerForm } from './answerForm.js';
import { handleAndAnswerMessageToBot } from './answerMessageToBot.js';
import type { SlackRequest } from './slackRequest.js';
import { isStoreUnavailable, storeTrouble } from '../store/storeErrors.js';

/** How long the requests queue waits when Redis did not answer, before it tries again. */
const STORE_WAIT_MS = 5_000;
/**
 * How long a start waits for the record of its job, which this process writes once Redis answers,
 * or for another run of it.
 */
const START_WAIT_MS = 2_000;

/** What the `requests` processor needs, built once by the worker. */
export interface RequestsContext {
  jobs: JobsContext;
  /** Slack's client for work nobody waits for (see worker.ts): a note on a digest. */
  backgroundSlack: JobsContext['slack'];
  userNames: UserNames;
  /** The digest's context for a run that stops waiting when `signal` is aborted. */
  digest: (signal: AbortSignal) => DigestContext;
  home: HomeRefresher;
  bot: BotIdentity;
  /** Whether the web role withdrew this job (a late add of a request it answered "try again", or lost). */
  withdrawn: (job: QueueJob<SlackRequest>) => Promise<boolean>;
  /** How long a note of a fix holds its digest between renewals (see answerForm.ts). */
  fixNoteHoldMs?: number;
}

/**
 * The requests whose late add the web role takes back: it answered them "try again shortly", or
 * told their author their message was lost.
 */
const WITHDRAWABLE: ReadonlySet<SlackRequest['kind']> = new Set([
  'command_start',
  'command_status',
  'command_digest',
  'form_submission',
  // Events whose author was told their message was lost (see enqueue.ts).
  'message_to_bot',
  'thread_reply',
]);

/**
 * The processor of the `requests` queue: one acknowledged Slack request, whichever door it came
 * through, runs its use case and is answered here. It never throws for a person's mistake or a
 * service's failure: those are answered in plain words, and the queue job completes. Redis away
 * is the exception: the job waits for it (the queue's rate limit) and runs again.
 */
export async function processRequest(
  ctx: RequestsContext,
  job: QueueJob<SlackRequest>,
  signal: AbortSignal,
): Promise<ProcessorResult<SlackRequest>> {
  try {
    // The person was told nothing started (or their message was lost), so nothing does.
    if (WITHDRAWABLE.has(job.data.kind) && (await ctx.withdrawn(job))) {
      ctx.jobs.logger.info(
        `a request whose author was told it was not taken reached the queue late; not acting on it (${job.id})`,
      );
      return undefined;
    }
    await runRequest(ctx, job, signal);
    return undefined;
  } catch (error) {
    if (error instanceof StartAwaitsError && !signal.aborted) {
      // Its job is being recorded here, or another run of the start holds it: answered on the run again.
      ctx.jobs.logger.info(`${error.waiting}; tried again in ${START_WAIT_MS / 1000} s`);
      return { again: { delayMs: START_WAIT_MS, data: job.data } };
    }
    if (!isStoreUnavailable(error) || signal.aborted) throw error;
    // Redis is away or hangs: no request of the queue gets further meanwhile. This one waits its
    // turn and runs again once Redis answers: its start marker and follow-up note keep it to once.
    ctx.jobs.logger.warn(
      `${storeTrouble(error)} while a Slack request was worked on; it is tried again in ${STORE_WAIT_MS / 1000} s`,
    );
    return { rateLimited: { waitMs: STORE_WAIT_MS } };
  }
}

async function runRequest(
  ctx: RequestsContext,
  job: QueueJob<SlackRequest>,
  signal: AbortSignal,
): Promise<void> {
  const request = job.data;
  // The queue job's id names the start: run again after a crash, it is known by it.
  const startId = job.id;
  switch (request.kind) {
    case 'command_start':
    case 'command_status':
    case 'command_digest':
      await answerCommand(request, {
        jobs: ctx.jobs,
        digest: ctx.digest(signal),
        respond: respondVia(request.responseUrl),
        startId,
        askedAt: new Date(job.addedAt),
      });
      return;
    case 'thread_reply':
      await steerFromThread(ctx, request, job.id, signal);
      return;
    case 'message_to_bot':
      await handleAndAnswerMessageToBot(ctx.jobs, ctx.userNames, { ...request.message }, startId);
      return;
    case 'form_submission':
      await answerForm(request, {
        jobs: ctx.jobs,
        backgroundSlack: ctx.backgroundSlack,
        userNames: ctx.userNames,
        bot: ctx.bot,
        startId,
        ...(ctx.fixNoteHoldMs ? { fixNoteHoldMs: ctx.fixNoteHoldMs } : {}),
      });
      return;
    case 'home_opened':
      // Not waited for: a publish Slack's rate limit holds back would hold one of the slots that
      // people's messages to the bot are worked in (the refresher tracks it, and logs its failure).
      void ctx.home.publishNow(request.user);
      return;
  }
}

/** A reply in a thread steers the job whose thread it is; any other thread is none of our business. */
async function steerFromThread(
  ctx: RequestsContext,
  request: Extract<SlackRequest, { kind: 'thread_reply' }>,
  handledBy: string,
  signal: AbortSignal,
): Promise<void> {
  const { place, text, files, forwarded, editedTs } = request;
  const { logger } = ctx.jobs;
  let outcome: SteerJobOutcome;
  try {
    outcome = await steerJob(ctx.jobs, ctx.userNames, {
      channel: place.channel,
      threadTs: place.threadTs,
      messageTs: place.ts,
      user: place.user,
      text,
      ...(files ? { files } : {}),
      ...(forwarded ? { forwarded } : {}),
      ...(editedTs !== undefined ? { editedTs } : {}),
      handledBy,
      signal,
      parentIsBot: place.parentIsBot === true,
      mentionsBot: place.mentionsBot === true,
    });
  } catch (error) {
    if (isStoreUnavailable(error)) throw error; // the queue job waits for Redis, then resumes
    if (signal.aborted) throw error; // the worker stops: the queue job goes back to the queue
    // We cannot tell whether this thread is a job's, so we stay quiet in the channel rather than
    // answer every thread reply with an error.
    logger.error(`a thread reply could not be handled: ${String(error)}`);
    return;
  }
  // An edit is read for its new words: answered only when they went to the job, or could not.
  if (editedTs !== undefined && !EDIT_ANSWERED.has(outcome.kind)) return;
  await answerFollowUp(ctx.jobs.slack, logger, place, outcome).catch((error: unknown) => {
    logger.warn(`could not answer a thread reply in ${place.channel}: ${String(error)}`);
  });
}
