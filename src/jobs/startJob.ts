import { truncate } from '../slack/escape.js';
import { classifySlackError } from '../slack/slackErrors.js';
import type { AgentBudget } from '../store/rateLedger.js';
import { cannotPostText, notInChannelText, startFailureText } from './jobAnswers.js';
import { jobCard } from './jobCard.js';
import { applyAgentJob, DISPLAY_PROMPT_MAX, type JobDoor, type JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';

export interface StartJobInput {
  /** The instruction exactly as the job receives it (plain text). */
  prompt: string;
  /** What the card shows as the instruction; defaults to the prompt. */
  displayPrompt?: string;
  requestedBy: string;
  channel: string;
  /** Post the card as a reply under this message, which becomes the job's thread. */
  threadTs?: string;
  door: JobDoor;
}

export type StartJobOutcome =
  | { kind: 'started'; record: JobRecord; budget: AgentBudget }
  /** The job exists but its card could not be posted: the record is kept and followed. */
  | {
      kind: 'unposted';
      record: JobRecord;
      budget: AgentBudget;
      text: string;
      reason: 'not_in_channel' | 'other';
    }
  | { kind: 'failed'; text: string; error: unknown };

/**
 * Creates the agent job, records it, then posts its card; the card's thread belongs to the job.
 * The record is written before the card so that a job Mintlify accepted is never lost,
 * even when the card cannot be posted.
 */
export async function startJob(ctx: JobsContext, input: StartJobInput): Promise<StartJobOutcome> {
  const { config, logger } = ctx;
  const projectId = config.mintlify.projectId;

  // Read the budget first: it tells the person how many uses are left, and if the store is
  // away this fails here, before Mintlify starts a job we could not keep track of.
  const before = await ctx.ledger.current(projectId);

  let job: Awaited<ReturnType<JobsContext['mintlify']['createJob']>>;
  try {
    job = await ctx.mintlify.createJob(projectId, input.prompt);
  } catch (error) {
    logger.warn(`could not start a job for ${input.requestedBy} in ${input.channel}: ${String(error)}`);
    return { kind: 'failed', text: startFailureText(error, before, ctx.now()), error };
  }
  if (!job.id) {
    // The spec marks no field required; a job without an id cannot be followed or steered.
    logger.error('Mintlify answered a created job without an id');
    return { kind: 'failed', text: startFailureText(undefined, undefined, ctx.now()), error: undefined };
  }

  const now = ctx.now();
  const budget = await ctx.ledger.recordUse(projectId).catch(() => before);
  let record: JobRecord = applyAgentJob(
    {
      jobId: job.id,
      projectId,
      channel: input.channel,
      threadTs: null,
      cardTs: null,
      requestedBy: input.requestedBy,
      prompt: truncate(input.displayPrompt ?? input.prompt, DISPLAY_PROMPT_MAX),
      door: input.door,
      status: 'unknown',
      prLink: null,
      repository: null,
      ref: null,
      model: null,
      createdAt: job.createdAt ?? now.toISOString(),
      updatedAt: now.toISOString(),
      finishedAt: null,
      round: 0,
      announced: [],
    },
    job,
    now,
  );
  await ctx.records.save(record);
  ctx.onJobActive(record.jobId);

  try {
    const card = jobCard(record, now);
    const posted = await ctx.slack.chat.postMessage({
      channel: input.channel,
      ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
      text: card.text,
      blocks: card.blocks,
      unfurl_links: false,
      unfurl_media: false,
    });
    const cardTs = posted.ts ?? null;
    const threadTs = input.threadTs ?? cardTs;
    // Merged into the stored record: the follower may have saved a newer status meanwhile.
    record = (await ctx.records.update(record.jobId, (current) => ({ ...current, cardTs, threadTs }))) ?? {
      ...record,
      cardTs,
      threadTs,
    };
    logger.info(`job ${record.jobId} started by ${input.requestedBy} in ${input.channel} (${input.door})`);
    ctx.onJobChanged?.(record); // the requester's Home tab lists it
    return { kind: 'started', record, budget };
  } catch (error) {
    const reason = classifySlackError(error) === 'not_in_channel' ? 'not_in_channel' : 'other';
    logger.warn(
      `job ${record.jobId} started, but its card could not be posted in ${input.channel}: ${String(error)}`,
    );
    const text = reason === 'not_in_channel' ? notInChannelText(record.jobId) : cannotPostText(record.jobId);
    return { kind: 'unposted', record, budget, text, reason };
  }
}
