import { didNothing } from '../mintlify/index.js';
import { truncate } from '../slack/escape.js';
import { findPostedMessage } from '../slack/postedMessages.js';
import { cardRefusalReason, slackErrorCode, threadTakesNoReply } from '../slack/slackErrors.js';
import { type HeldLease, withRenewedLease } from '../store/lease.js';
import type { AgentBudget } from '../store/rateLedger.js';
import {
  cannotPostText,
  cardLaterText,
  interruptedStartText,
  notInChannelText,
  operatorHint,
  SLACK_TOKEN_REFUSED_TEXT,
  startFailureText,
  STARTED_WITHOUT_ID_TEXT,
} from './jobAnswers.js';
import {
  applyAgentJob,
  DISPLAY_PROMPT_MAX,
  FINISHED,
  type JobAbout,
  type JobDoor,
  type JobRecord,
} from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import {
  type JobStart,
  jobOfStart,
  START_LEASE_MS,
  StartElsewhereError,
  startLeaseName,
  ThreadStartingError,
  UnrecordedJobError,
} from './jobStarts.js';
import { noteIfLimitReached } from './agentLimit.js';
import { cardMark, placeCard, postJobCard } from './postJobCard.js';
import { createUse, recordCreated } from './recordCreatedJob.js';

/**
 * How long a start gives way to another run of it (StartElsewhereError) before it tells the person.
 * The other run's own steps end long before (Mintlify's and Slack's retries give up within minutes).
 */
const GIVE_WAY_AT_MOST_MS = 10 * 60_000;

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
  /** The message the job is about, linked from its card (when the card is not under it). */
  about?: JobAbout;
  /**
   * Replies in its thread up to this ts (this one included) are in the prompt already: a mention's
   * thread so far (with the mention, the prompt itself), or the thread a shortcut read.
   */
  contextBefore?: string;
}

export type StartJobOutcome =
  | { kind: 'started'; record: JobRecord; budget: AgentBudget }
  /**
   * The job exists but its card is not posted: the record is kept and followed. `later`: Slack was
   * busy, and the follower posts the card shortly; otherwise Slack refused it here: `not_allowed`,
   * where posting is not allowed to the bot (an announcement-only channel: it may well be a member).
   */
  | {
      kind: 'unposted';
      record: JobRecord;
      budget: AgentBudget;
      text: string;
      reason: 'not_in_channel' | 'not_allowed' | 'later' | 'other';
    }
  /** `madeNothing`: Mintlify refused it before making anything, so asking again starts no second job. */
  | { kind: 'failed'; text: string; error: unknown; madeNothing?: true };

/**
 * Creates the agent job, records it, then posts its card; the card's thread belongs to the job.
 * Each step is written down before the next, so a crash at any point leaves something to finish:
 * the start, then its claim of the one request to Mintlify (a crash before the record: the start
 * runs again if Mintlify was not asked yet, else the person is told), the record
 * with its card pending before the card is posted (a crash before the card is recorded: the
 * follower finds the card or posts it). The start's lease keeps that recovery from racing us.
 */
export async function startJob(
  ctx: JobsContext,
  input: StartJobInput,
  /** The queue job's id: a start run again (its process crashed) is known by it. */
  startId: string,
): Promise<StartJobOutcome> {
  const held = await withRenewedLease(
    ctx.store.atomic,
    startLeaseName(startId),
    START_LEASE_MS,
    async (lost, lease) => {
      // Its job was created here while Redis was away, and is not recorded yet: wait for that
      // rather than tell the person the start was cut short.
      if (ctx.starts.unrecorded.has(startId)) throw new UnrecordedJobError(startId);
      const earlier = await ctx.starts.get(startId);
      const resumed = earlier && (await resumeStart(ctx, earlier));
      if (!resumed) return startHeld(ctx, input, startId, { lost, lease });
      // Its door claimed the thread again for this run: the start ended before (its job made and
      // recorded, or refused), so the thread is let go, as startHeld lets it go at its end.
      if (input.threadTs) await ctx.starts.releaseThread(input.channel, input.threadTs, startId);
      return resumed;
    },
    // Run again after its process died, the start waits out the dead holder's lease.
    { waitMs: START_LEASE_MS + 1_000, logger: ctx.logger },
  );
  if (held.ran) return held.value;
  // Held elsewhere, or lost before a once-only step: the queue runs the request again shortly, and
  // that run answers from the start (the person hears nothing from this one). Unless it has waited
  // for the other run so long that something is wrong with it: then the person is told.
  const begun = await ctx.starts.get(startId);
  if (begun && ctx.now().getTime() - Date.parse(begun.at) > GIVE_WAY_AT_MOST_MS) {
    ctx.logger.warn(
      `the start ${startId} was held by another run of it for over ${GIVE_WAY_AT_MOST_MS / 60_000} minutes; the person is told it was interrupted`,
    );
    return { kind: 'failed', text: interruptedStartText(begun.prompt), error: undefined };
  }
  throw new StartElsewhereError(startId);
}

/**
 * The same start, run again because the process running it died or lost its lease: Mintlify is
 * never asked twice. A job it made is the follower's to finish (its card is pending), and a refusal
 * of a start that made none is answered again. Undefined when it made no job and was not refused:
 * the start goes on from there (startHeld), and tells the person it was cut short only if Mintlify
 * was asked.
 */
async function resumeStart(ctx: JobsContext, start: JobStart): Promise<StartJobOutcome | undefined> {
  // A job it made comes first, even when a run of it was told the start was cut short: the run
  // whose claim that one found taken made the job after all.
  const made = await jobOfStart(ctx, start);
  if (!made && start.refusal !== undefined) {
    return {
      kind: 'failed',
      text: start.refusal,
      error: undefined,
      ...(start.madeNothing ? { madeNothing: true } : {}),
    };
  }
  if (!made && start.claimsAsk) return undefined;
  if (!made) return cutShort(ctx, start); // written before claims were made: Mintlify may have been asked
  // The run that made it may have died before the job's first check was queued: queued now (a
  // check that holds the job's id already stands).
  if (!FINISHED.has(made.status)) ctx.onJobActive(made.jobId);
  const budget = await ctx.ledger.current(ctx.config.mintlify.projectId);
  if (made.cardTs) return { kind: 'started', record: made, budget };
  // Slack may have taken the card of the run that died (its answer came too late, or the record's
  // write failed as that worker stopped): found, it is the job's, and nobody is told it was not taken.
  const found = made.pendingCard && !made.pendingCard.inDm ? await postedCard(ctx, made) : undefined;
  if (found) {
    ctx.logger.info(`job ${made.jobId}: found its card, posted before a restart; not posting it again`);
    return { kind: 'started', record: found, budget };
  }
  // Its card is pending (the follower posts it shortly), or the channel refused it before the crash.
  if (made.pendingCard) {
    return { kind: 'unposted', record: made, budget, text: cardLaterText(made.jobId), reason: 'later' };
  }
  // Refused for good: said as the run that died would have said it (an announcement-only channel
  // is not one to invite the bot to).
  const reason = made.cardRefused ?? 'other';
  const text = reason === 'not_in_channel' ? notInChannelText(made.jobId) : cannotPostText(made.jobId);
  return { kind: 'unposted', record: made, budget, text, reason };
}

/** The pending card of a job, if it is in Slack after all: then recorded as the job's card. */
async function postedCard(ctx: JobsContext, record: JobRecord): Promise<JobRecord | undefined> {
  const pending = record.pendingCard;
  if (!pending) return undefined;
  // Slack could not say (busy): the follower looks again, as it does for any pending card.
  const card = await findPostedMessage(
    ctx.slack,
    { channel: record.channel, threadTs: pending.threadTs, since: new Date(pending.since) },
    cardMark(record.jobId),
    ctx.botId,
  ).catch(() => undefined);
  return card && placeCard(ctx, record, { channel: record.channel, ts: card.ts }, pending.threadTs);
}

/**
 * A start whose request to Mintlify was sent by a run that never got the answer: the person is told
 * it was cut short, and the start's runs again answer the same.
 */
async function cutShort(ctx: JobsContext, start: JobStart): Promise<StartJobOutcome> {
  ctx.logger.warn(`a job start by ${start.requestedBy} in ${start.channel} was cut short by a restart`);
  const text = interruptedStartText(start.prompt);
  await ctx.starts.refused(start, text);
  return { kind: 'failed', text, error: undefined };
}

async function startHeld(
  ctx: JobsContext,
  input: StartJobInput,
  startId: string,
  held: { lost: AbortSignal; lease: HeldLease },
): Promise<StartJobOutcome> {
  const threadTs = input.threadTs ?? null;
  if (threadTs === null) return createAndPost(ctx, input, startId, held);
  // Until the job's record names the thread, a message there waits for the job rather than go
  // unseen, and a second start there waits to see the thread taken.
  if (!(await ctx.starts.claimThread(input.channel, threadTs, startId))) {
    throw new ThreadStartingError(input.channel, threadTs);
  }
  try {
    // Another start may have made the thread its job's since this one's door looked (and let go of
    // it): run again, the door then finds that job (a follow-up, or a card of its own elsewhere).
    const taken = await ctx.records.byThread(input.channel, threadTs);
    if (taken && taken.startId !== startId) throw new ThreadStartingError(input.channel, threadTs);
    return await createAndPost(ctx, input, startId, held);
  } finally {
    // A job whose record waits for Redis keeps the thread until it is written (keepUntilRecorded);
    // a release Redis misses lapses on its own.
    if (!ctx.starts.unrecorded.has(startId)) {
      await ctx.starts.releaseThread(input.channel, threadTs, startId).catch(() => {});
    }
  }
}

async function createAndPost(
  ctx: JobsContext,
  input: StartJobInput,
  startId: string,
  held: { lost: AbortSignal; lease: HeldLease },
): Promise<StartJobOutcome> {
  const { config, logger } = ctx;
  const projectId = config.mintlify.projectId;
  const prompt = truncate(input.displayPrompt ?? input.prompt, DISPLAY_PROMPT_MAX);
  const threadTs = input.threadTs ?? null;

  const start: JobStart = {
    id: startId,
    channel: input.channel,
    threadTs,
    requestedBy: input.requestedBy,
    door: input.door,
    prompt,
    at: ctx.now().toISOString(),
    claimsAsk: true,
  };
  // The budget tells the person how many uses are left, and the start is written down before its
  // claim: both in one round trip, and if the store is away this fails here, before Mintlify
  // starts a job we could not keep track of.
  const [before, refusedElsewhere] = await Promise.all([
    ctx.ledger.current(projectId),
    ctx.slackToken?.refusedElsewhere() ?? false,
    ctx.starts.begin(start),
  ]);
  const refused = async (text: string, madeNothing = false) => {
    await ctx.starts.refused(start, text, madeNothing).catch((error: unknown) => {
      logger.warn(`could not note the refused start ${startId}: ${String(error)}`);
    });
    return text;
  };

  // Slack refuses the bot's token (the app was installed again): the job's card could never be
  // posted, so no job is made at Mintlify. (The answer reaches a slash command through its response URL.)
  // Asked again first (a call Slack takes clears it): a refusal that passed does not outlive it. One
  // another process found counts too: Slack is asked before this process makes a job of its own.
  if (ctx.slackToken?.refusal !== undefined || refusedElsewhere)
    await ctx.slack.auth.test().catch(() => undefined);
  if (ctx.slackToken?.refusal !== undefined) {
    return { kind: 'failed', text: await refused(SLACK_TOKEN_REFUSED_TEXT), error: undefined };
  }

  // Mintlify is asked once per start: if our lease lapsed meanwhile (a stall, Redis away), the same
  // start may be running elsewhere, and it asks. The claim checks the lease in the same step (and
  // throws, so this run gives way, when it is gone). From the create on, the job is ours to record
  // whatever happens.
  if (!(await ctx.starts.claimAsk(startId, held.lease))) {
    // Claimed by an earlier holder of this start's lease, which may have asked Mintlify.
    return cutShort(ctx, start);
  }
  let job: Awaited<ReturnType<JobsContext['mintlify']['createJob']>>;
  const askedAt = ctx.now().getTime();
  try {
    job = await ctx.mintlify.createJob(projectId, input.prompt);
  } catch (error) {
    logger.warn(
      `could not start a job for ${input.requestedBy} in ${input.channel}: ${String(error)}${operatorHint(error)}`,
    );
    await noteIfLimitReached(ctx, projectId, error);
    // Answered in the door; a run of the same queue job again answers the same.
    const madeNothing = didNothing(error);
    const text = await refused(startFailureText(error, before, ctx.now()), madeNothing);
    return { kind: 'failed', text, error, ...(madeNothing ? { madeNothing: true } : {}) };
  }
  if (!job.id) {
    // The spec marks no field required; a job without an id cannot be followed or steered. It was
    // created all the same: the person is told so, not to try again (that would start a second one).
    logger.error('Mintlify answered a created job without an id');
    await ctx.ledger.recordUse(projectId, createUse(`start-${startId}`), askedAt).catch(() => undefined);
    const text = await refused(STARTED_WITHOUT_ID_TEXT);
    return { kind: 'failed', text, error: undefined };
  }

  const now = ctx.now();
  // Counted while the record is written (one round trip): only the answer waits for the count.
  const counting = ctx.ledger.recordUse(projectId, createUse(job.id), askedAt).then(
    (budget) => ({ budget, counted: true }),
    () => ({ budget: before, counted: false }),
  );
  let record: JobRecord = applyAgentJob(
    {
      jobId: job.id,
      projectId,
      channel: input.channel,
      threadTs: null,
      cardTs: null,
      requestedBy: input.requestedBy,
      prompt,
      door: input.door,
      ...(input.about ? { about: input.about } : {}),
      ...(input.contextBefore ? { contextBefore: input.contextBefore } : {}),
      status: 'unknown',
      prLink: null,
      repository: null,
      ref: null,
      model: null,
      // A time Mintlify gave that does not parse would break the card and every list it is in.
      createdAt:
        job.createdAt && !Number.isNaN(Date.parse(job.createdAt)) ? job.createdAt : now.toISOString(),
      updatedAt: now.toISOString(),
      finishedAt: null,
      round: 0,
      announced: [],
      startId,
      pendingCard: { threadTs, since: now.toISOString() },
    },
    job,
    now,
  );
  // Written before the card, so that a job Mintlify accepted is never lost, even when the card
  // cannot be posted. From here on the record stands for the start.
  const [{ budget }] = await Promise.all([counting, recordCreated(ctx, record, counting)]);

  // Recorded with its card pending: if our lease lapsed, the follower may be posting the card now,
  // and this start's run again answers from the record.
  held.lost.throwIfAborted();
  let cardThread = threadTs;
  let posted = await postJobCard(ctx, record, { channel: input.channel, threadTs });
  if (posted.kind === 'refused' && threadTs !== null && threadTakesNoReply(posted.error)) {
    // The message's thread takes no reply (an admin locked it, the message is gone, the channel has
    // no threads) while the bot is in the channel: the card is a message of its own there, linking
    // the message, rather than moved to the DM as if the bot had not been invited.
    logger.info(
      `job ${record.jobId}: the thread ${threadTs} in ${input.channel} takes no reply (${slackErrorCode(posted.error)}); its card is posted in the channel`,
    );
    const inChannel = (current: JobRecord): JobRecord => {
      const { under: _under, ...linked } = current.about ?? {};
      return {
        ...current,
        ...(current.about ? { about: linked as JobRecord['about'] } : {}),
        pendingCard: { threadTs: null, since: ctx.now().toISOString() },
      };
    };
    record = (await ctx.records.update(record.jobId, inChannel).catch(() => undefined)) ?? inChannel(record);
    cardThread = null;
    posted = await postJobCard(ctx, record, { channel: input.channel });
  }
  if (posted.kind === 'posted') {
    const card = posted;
    record = await placeCard(ctx, record, card, cardThread).catch((error: unknown) => {
      // The card carries the job's id: the follower finds it and records it once the store answers.
      logger.error(
        `job ${record.jobId}: its card is posted, but the record could not say so: ${String(error)}`,
      );
      return { ...record, cardTs: card.ts, threadTs: cardThread ?? card.ts };
    });
    logger.info(`job ${record.jobId} started by ${input.requestedBy} in ${input.channel} (${input.door})`);
    return { kind: 'started', record, budget };
  }

  logger.warn(
    `job ${record.jobId} started, but its card could not be posted in ${input.channel}: ${String(posted.error)}`,
  );
  if (posted.kind === 'later') {
    return { kind: 'unposted', record, budget, text: cardLaterText(record.jobId), reason: 'later' };
  }
  // Refused for good here: the door tells the person (or moves the job to their DM). Why is kept
  // with the record, for this start's run again if its process dies before the person is told.
  const reason = cardRefusalReason(posted.error);
  record =
    (await ctx.records
      .update(record.jobId, (current) => ({ ...current, pendingCard: undefined, cardRefused: reason }))
      .catch(() => undefined)) ?? record;
  const text = reason === 'not_in_channel' ? notInChannelText(record.jobId) : cannotPostText(record.jobId);
  return { kind: 'unposted', record, budget, text, reason };
}
