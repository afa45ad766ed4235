import type { UserNames } from '../slack/plainText.js';
import { slackToPlainText } from '../slack/plainText.js';
import { firstSighting } from '../store/dedupe.js';
import type { AgentBudget } from '../store/rateLedger.js';
import { accessRefusal } from './access.js';
import {
  DM_FILES_ONLY_REPLY_TEXT,
  EDIT_AFTER_UNSURE_SEND_TEXT,
  EDIT_LOST_TEXT,
  EDIT_NOT_SENT_TEXT,
  FILES_ONLY_TEXT,
  followUpFailureText,
  INTERRUPTED_FOLLOW_UP,
  tooOldToSteerText,
} from './jobAnswers.js';
import { isDirectMessage } from '../slack/conversations.js';
import { cannotStopText, commandWordText, DM_JOB_THREAD_HELP, JOB_THREAD_HELP } from './doorAnswers.js';
import { editJobCard } from './jobNotifications.js';
import { JOB_CARD_MARK_TYPE } from '../slack/postedMessages.js';
import { applyFollowUpAnswer, FINISHED, type JobRecord } from './jobRecord.js';
import { type AgentJob, didNothing } from '../mintlify/index.js';
import { isStoreUnavailable } from '../store/storeErrors.js';
import type { JobsContext } from './jobsContext.js';
import { againOnceRedisAnswers } from './onceRedisAnswers.js';
import { type ReplyUnderWay, replyUnderWay } from './replyOrder.js';
import { noteIfLimitReached } from './agentLimit.js';
import { ReplyEditWaitsError, ThreadStartingError } from './jobStarts.js';
import { betweenPeople, commandWordOf, isStopWord, smallTalkOf } from './smallTalk.js';
import { filesNote, forwardedSection } from './threadContext.js';
import { type ThreadMessage, tsBefore } from '../slack/threadMessages.js';

export interface SteerJobInput {
  channel: string;
  threadTs: string;
  /** The reply's own ts: with the channel, it names the message however often Slack delivers it. */
  messageTs: string;
  user: string;
  /** The reply as Slack delivered it (with Slack markup). */
  text: string;
  /** Files shared with it: named for the agent (it cannot open Slack files). */
  files?: ThreadMessage['files'];
  /** A message forwarded with it (Slack markup): the text is the comment typed with it. */
  forwarded?: string;
  /** The queue job handling this delivery: run again after a crash, it still sends the reply. */
  handledBy: string;
  /** Its queue job's: aborted when the worker stops, a reply held back gives the job back (replyOrder.ts). */
  signal?: AbortSignal;
  /** The thread's first message is the bot's (a job card, perhaps of a job long forgotten). */
  parentIsBot?: boolean;
  /** The reply mentions the bot: then it also arrives as a mention, which may start a job. */
  mentionsBot?: boolean;
  /**
   * The reply's edit (its time, as Slack's `edited.ts`), with its words as they read now: sent in the
   * reply's place while the job does not have the reply yet (see `sendTurn`).
   */
  editedTs?: string;
}

export type SteerJobOutcome =
  | { kind: 'ignored'; why: 'not_a_job_thread' | 'between_people' | 'small_talk' | 'empty' | 'already_sent' }
  /**
   * An edit not sent: of a reply the job has already (its author told so, once per reply), or made
   * while the reply was being sent, which Mintlify then refused (its author told the job has neither).
   */
  | { kind: 'edit_not_sent'; text: string }
  /** `status` or `digest` alone: words for `/docs-agent`, not sent; its author is told where to type them. */
  | { kind: 'command_word'; text: string }
  /** A lone "stop" or "cancel": not sent (it would set the job working); its author is told why. */
  | { kind: 'cannot_stop'; text: string }
  /** A greeting, "help" or "?": not sent; its author is shown the thread's help. */
  | { kind: 'help'; text: string }
  | { kind: 'refused'; text: string }
  /** The thread is the card's of a job forgotten after JOB_RETENTION_DAYS: its author is told. */
  | { kind: 'too_old'; text: string }
  /** Only files, no words: nothing the agent could use; its author is told. */
  | { kind: 'files_only'; text: string }
  | { kind: 'sent'; record: JobRecord; budget: AgentBudget | undefined }
  | { kind: 'failed'; record: JobRecord; text: string; error: unknown };

/** The follow-up's words for a message forwarded into the job's thread with none typed. */
const FORWARDED_ALONE = 'Take into account the message below, forwarded into this job’s thread.';

/** How long the answer to a follow-up is tried to be recorded while Redis is away. */
const KEEP_ANSWER_MS = 30 * 60_000;
// As long as the message's own dedupe: past it, a queue job is not run again.
const FOLLOW_UP_NOTE_MS = 24 * 3_600_000;
/** An edit made this long after its reply is only an edit: the reply's marks below may be gone. */
const EDITS_COUNT_MS = 24 * 3_600_000;
/** How long a reply's marks are kept: which version of it was sent, its latest edit, its author told. */
const REPLY_MARKS_MS = 2 * EDITS_COUNT_MS;
/** The latest edit of a reply (an index of one, its highest ts). */
const editsKey = (channel: string, ts: string) => `reply-edits:${channel}:${ts}`;
/** Which version of a reply was sent to the job (`first`, or an edit's ts), and by which queue job. */
const sentKey = (channel: string, ts: string) => `reply-sent:${channel}:${ts}`;
/** Its author was told that the job has an earlier version than their edit. */
const editToldKey = (channel: string, ts: string) => `reply-edit-told:${channel}:${ts}`;
/** The version sent reached the job (or may have): Mintlify answered, or could not say. */
const reachedKey = (channel: string, ts: string) => `reply-reached:${channel}:${ts}`;
/** This edit waited while an earlier version of its reply was being sent. */
const editWaitedKey = (channel: string, ts: string, editedTs: string) =>
  `reply-edit-waited:${channel}:${ts}:${editedTs}`;
/** How long an edit waits at most, from when it was made, for its reply's send (one whose run died). */
const EDIT_WAITS_AT_MOST_MS = 2 * 60_000;
const FIRST = 'first';
/** Marks a version as reached that the job may have or not (its send cut short, or its answer lost). */
const MAYBE = 'maybe';

/**
 * Sends a reply in a job's thread to that job as a follow-up. Slack may deliver the same reply
 * more than once (retries, or as both a message and a mention): it is sent once, across instances.
 */
export async function steerJob(
  ctx: JobsContext,
  userNames: UserNames,
  input: SteerJobInput,
): Promise<SteerJobOutcome> {
  // An edit is noted first: while the job does not have the reply, its latest words are the ones to send.
  if (input.editedTs !== undefined && !(await noteEdit(ctx, input, input.editedTs)))
    return { kind: 'ignored', why: 'not_a_job_thread' };
  // A thanks or an OK is for the people in the thread: sent, it would set a finished job working again
  // and spend an agent use. Known from the words alone, before the thread's job is looked up. Typed
  // with a file or a forwarded message, it is only their comment: what was shared is looked at.
  const talk = smallTalkOf(input.text);
  if (talk === 'thanks' && !input.files?.length && !input.forwarded)
    return { kind: 'ignored', why: 'small_talk' };
  // A `//` aside, or a call to people (`@cat`, `@here`) and nothing else, is theirs too.
  const amongPeople = betweenPeople(input.text);
  let record = await ctx.records.byThread(input.channel, input.threadTs);
  if (!record) {
    // Its job is starting (its thread read, or Mintlify asked): the reply waits for it, and is sent to it then.
    if (await ctx.starts.threadStarting(input.channel, input.threadTs)) {
      throw new ThreadStartingError(input.channel, input.threadTs);
    }
    // A start lets go of the thread once its record names it: read again, in case that was just now.
    record = await ctx.records.byThread(input.channel, input.threadTs);
  }
  if (!record) {
    // Nor is a greeting under a forgotten job's card: none of these was for the agent (nor an edit,
    // whose reply had its answer).
    const forgotten =
      !amongPeople &&
      talk !== 'greeting' &&
      input.editedTs === undefined &&
      (await forgottenJobThread(ctx, input));
    if (forgotten) {
      const where = isDirectMessage(input.channel) ? 'dm' : 'channel';
      return { kind: 'too_old', text: tooOldToSteerText(ctx.config.jobRetentionMs, where) };
    }
    return { kind: 'ignored', why: 'not_a_job_thread' };
  }
  // Under way from now: a later reply of the thread is not sent before this one is done with.
  const underWay = await replyUnderWay(ctx, input);
  try {
    return await steerTheJob(ctx, userNames, input, { record, talk, amongPeople }, underWay);
  } finally {
    await underWay.done();
  }
}

/** `steerJob` once the thread's job is known. */
async function steerTheJob(
  ctx: JobsContext,
  userNames: UserNames,
  input: SteerJobInput,
  /** The thread's job, and what the reply's words alone said (read by `steerJob`). */
  read: { record: JobRecord; talk: ReturnType<typeof smallTalkOf>; amongPeople: boolean },
  underWay: ReplyUnderWay,
): Promise<SteerJobOutcome> {
  const { record, talk, amongPeople } = read;
  const refusal = accessRefusal(ctx.config.access, input.user, input.channel);
  // A reply is activity: the job is kept JOB_RETENTION_DAYS from now, whatever comes of it (but not
  // for someone the allowlists leave out, who cannot steer it either).
  if (!refusal) await ctx.records.touch(record.jobId);

  if (amongPeople) return { kind: 'ignored', why: 'between_people' };
  const plain = (await slackToPlainText(input.text, userNames)).trim();
  const files = filesNote(input.files);
  // A message forwarded into the thread is for the job, with or without words typed with it.
  const forwarded = input.forwarded ? (await slackToPlainText(input.forwarded, userNames)).trim() : '';
  // With files or a forwarded message, a thanks or a greeting is what was shared alone.
  const said = talk ? '' : plain;
  // No words and nothing forwarded: nothing for the job. A bare mention (with a file or not) is the
  // mention's to answer, with help; Slack sends no mention for a message in the bot's DM.
  const mentionAnswers = input.mentionsBot === true && !isDirectMessage(input.channel);
  // A "hi", a "help" or a "?" is answered with the thread's help (a mention's by the mention itself).
  const greeted = talk === 'greeting' && files === '' && forwarded === '';
  if (greeted && mentionAnswers) return { kind: 'ignored', why: 'small_talk' };
  if (said === '' && !greeted && ((files === '' && forwarded === '') || mentionAnswers))
    return { kind: 'ignored', why: 'empty' };
  // In the thread the job was given as context (written before the mention that started it, or read
  // with the thread a shortcut sent), and delivered late or held while the job started: the job has it.
  if (record.contextBefore && !tsBefore(record.contextBefore, input.messageTs)) {
    return { kind: 'ignored', why: 'already_sent' };
  }
  const key = `message:${input.channel}:${input.messageTs}${input.editedTs !== undefined ? `:edit:${input.editedTs}` : ''}`;
  if (!(await firstSighting(ctx.store.atomic, key, { by: input.handledBy }))) {
    return { kind: 'ignored', why: 'already_sent' };
  }
  // Told once (after the dedupe), however often Slack delivers it.
  const word = files === '' ? commandWordOf(said) : undefined;
  if (word) return { kind: 'command_word', text: commandWordText(word, 'thread', said) };
  if (files === '' && isStopWord(said))
    return { kind: 'cannot_stop', text: cannotStopText(said.replace(/[.!]+$/, '')) };
  // Forwarded with no words: the follow-up says what it is, and the forwarded message stays quoted context.
  const words = said === '' && forwarded !== '' ? FORWARDED_ALONE : said;
  const asked = files ? `${words}\n${files}` : words;
  const prompt = forwarded ? `${asked}\n\n${forwardedSection(forwarded)}` : asked;
  // After the dedupe, so a reply delivered as both a message and a mention is refused once.
  if (refusal) return { kind: 'refused', text: refusal };
  if (greeted)
    return { kind: 'help', text: isDirectMessage(input.channel) ? DM_JOB_THREAD_HELP : JOB_THREAD_HELP };
  // Told once (after the dedupe), however often Slack delivers it.
  if (said === '' && forwarded === '') {
    const text = isDirectMessage(input.channel) ? DM_FILES_ONLY_REPLY_TEXT : FILES_ONLY_TEXT;
    return { kind: 'files_only', text };
  }

  // After any earlier reply of the thread: the job takes them in the order they were written.
  await underWay.earlierSent(input.signal);
  // Sent once, in its latest words: an edit made while it waited goes instead of it.
  const turn = await sendTurn(ctx, input);
  if (turn.kind !== 'send') return turn.outcome;
  // Noted before the POST, which is never sent twice: the same queue job run again after a crash
  // finds the note, and tells the person instead of sending the reply a second time.
  if (!(await ctx.store.atomic.setIfAbsent(`follow-up:${input.handledBy}`, '1', FOLLOW_UP_NOTE_MS))) {
    ctx.logger.warn(`a follow-up to job ${record.jobId} was cut short by a restart; not sending it again`);
    // The run cut short may have sent it (Mintlify took it, its answer never came): as for an answer lost.
    await turn.reached('maybe');
    await followAsMaybeTaken(ctx, record.jobId, input.user);
    return { kind: 'failed', record, text: INTERRUPTED_FOLLOW_UP, error: undefined };
  }
  try {
    // Sent even when the job looks finished: the agent takes it up in the background (applyFollowUpAnswer).
    const sentAt = ctx.now().getTime();
    const job = await ctx.mintlify.sendMessage(record.projectId, record.jobId, prompt);
    await turn.reached();
    const budget = await ctx.ledger
      .recordUse(record.projectId, `follow-up:${input.handledBy}`, sentAt)
      .catch(() => undefined);
    const updated = await ctx.records
      .update(record.jobId, (current) => applyFollowUpAnswer(current, job, ctx.now(), input.user))
      .catch((error: unknown) => {
        if (isStoreUnavailable(error)) recordOnceRedisAnswers(ctx, record.jobId, job, input.user);
        else {
          ctx.logger.error(
            `follow-up sent to job ${record.jobId}, but its record could not be updated: ${String(error)}`,
          );
        }
        return undefined;
      });
    if (updated && updated.status !== record.status) {
      // The job reopened: its card should say so now, not at the follower's next check.
      await editJobCard(ctx, updated);
      ctx.onJobChanged?.(updated);
    }
    ctx.onJobActive(record.jobId);
    ctx.logger.info(`follow-up from ${input.user} sent to job ${record.jobId}`);
    return { kind: 'sent', record: updated ?? record, budget };
  } catch (error) {
    ctx.logger.warn(`could not send a follow-up to job ${record.jobId}: ${String(error)}`);
    if (!didNothing(error)) {
      await turn.reached('maybe');
      await followAsMaybeTaken(ctx, record.jobId, input.user);
    }
    // The job did not get it: an edit of it ("please rephrase") is the author's next try.
    else await turn.release();
    await noteIfLimitReached(ctx, record.projectId, error);
    const budget = await ctx.ledger.current(record.projectId).catch(() => undefined);
    const where = isDirectMessage(input.channel) ? 'dm' : 'channel';
    return { kind: 'failed', record, text: followUpFailureText(error, budget, ctx.now(), where), error };
  }
}

/**
 * Mintlify may have taken a follow-up whose answer was lost (or whose run was cut short), and the
 * job may work again: followed as after a follow-up the agent has not taken up yet (as if Mintlify
 * had answered the job as the record has it), so that the round it started reaches the thread the
 * person is told to watch. Had it not landed, the end is believed again after the follow-up's grace,
 * and said once more.
 */
async function followAsMaybeTaken(ctx: JobsContext, jobId: string, author: string): Promise<void> {
  const sentAt = ctx.now();
  const followed = await ctx.records
    .update(jobId, (current) => applyFollowUpAnswer(current, asRecorded(current), sentAt, author))
    .catch((updateError: unknown) => {
      ctx.logger.warn(
        `job ${jobId} may have taken a follow-up, but is not followed again: ${String(updateError)}`,
      );
      return undefined;
    });
  if (followed) ctx.onJobActive(jobId);
}

/** The job as its record has it, as if Mintlify had answered so. */
function asRecorded(record: JobRecord): AgentJob {
  return { ...(record.status === 'unknown' ? {} : { status: record.status }), prLink: record.prLink };
}

/**
 * The job's answer to a follow-up, which Redis could not take: written once Redis answers, so that a
 * job the follow-up reopened is followed again (the record of a finished job is not). Unless the
 * record changed since (then the follower has it), as the other writes of a job kept while Redis is
 * away (startJob.ts).
 */
function recordOnceRedisAnswers(ctx: JobsContext, jobId: string, job: AgentJob, author: string): void {
  const answeredAt = ctx.now();
  ctx.logger.warn(
    `follow-up sent to job ${jobId}, but Redis is away: its record is updated once Redis answers`,
  );
  againOnceRedisAnswers(
    ctx,
    async () => {
      const updated = await ctx.records.update(jobId, (current) =>
        Date.parse(current.updatedAt) > answeredAt.getTime()
          ? current
          : applyFollowUpAnswer(current, job, answeredAt, author),
      );
      if (updated && !FINISHED.has(updated.status)) ctx.onJobActive(jobId);
      if (updated) ctx.logger.info(`job ${jobId}: its follow-up's answer recorded once Redis answered again`);
    },
    {
      forMs: KEEP_ANSWER_MS,
      undone: (why) =>
        ctx.logger.error(
          `job ${jobId}: its follow-up's answer could not be recorded (${why}); if the follow-up reopened it, it is not followed`,
        ),
    },
  );
}

/**
 * A reply under one of the bot's job cards whose job is no longer kept. Only the bot's own
 * threads are looked at (one read of the thread's first message, for its job card mark), and only
 * once per reply; a reply that mentions the bot is the mention's to answer.
 */
async function forgottenJobThread(ctx: JobsContext, input: SteerJobInput): Promise<boolean> {
  if (!input.parentIsBot || input.mentionsBot) return false;
  if (!(await startsWithJobCard(ctx.slack, input.channel, input.threadTs))) return false;
  return firstSighting(ctx.store.atomic, `message:${input.channel}:${input.messageTs}`, {
    by: input.handledBy,
  });
}

/** Whether the thread's first message is one of the bot's job cards (one read, of that message alone). */
export async function startsWithJobCard(
  slack: JobsContext['slack'],
  channel: string,
  threadTs: string,
): Promise<boolean> {
  const first = await slack.conversations.replies({
    channel,
    ts: threadTs,
    limit: 1,
    include_all_metadata: true,
  });
  const parent = first.messages?.[0] as { metadata?: { event_type?: string } } | undefined;
  return parent?.metadata?.event_type === JOB_CARD_MARK_TYPE;
}

/**
 * Notes an edit of a reply in a job's thread (one that is, or is starting), so that the reply, if it
 * is still waiting to be sent (for its job to be created, or behind an earlier reply), goes in these
 * words instead. False when the edit is none of the bot's business, or too late to count.
 */
async function noteEdit(ctx: JobsContext, input: SteerJobInput, editedTs: string): Promise<boolean> {
  if (ctx.now().getTime() - Number(input.messageTs) * 1000 > EDITS_COUNT_MS) return false;
  const note = () =>
    ctx.store.atomic.indexAdd(
      editsKey(input.channel, input.messageTs),
      editedTs,
      Number(editedTs),
      1,
      REPLY_MARKS_MS,
    );
  const record = await ctx.records.byThread(input.channel, input.threadTs);
  if (!record) {
    if (!(await ctx.starts.threadStarting(input.channel, input.threadTs))) return false;
    // Its job is starting (its door reads the thread, or Mintlify is asked): noted now, so that its
    // reply, waiting too, gives way to it whichever of them goes on first; the edit waits for the job.
    // (Noted for a message of the thread's context too, whose reply is never sent: harmless.)
    await note();
    throw new ThreadStartingError(input.channel, input.threadTs);
  }
  // A message written before its thread's job was asked for (the thread's context, a message the
  // shortcut chose, the message that started the job) is none of the job's: its edits change nothing.
  if (Number(input.messageTs) * 1000 <= (await jobAskedAt(ctx, record))) return false;
  await note();
  return true;
}

/**
 * Whether this version of a reply (the reply as written, or one of its edits) is the one to send: a
 * reply is sent once, in its latest words. A version with a later edit noted gives way to it (that
 * edit, read on its own, is sent or not); the first to claim the send sends. An edit that comes once
 * the job has an earlier version is not sent: its author is told so, once per reply. One that comes
 * while an earlier version is being sent waits to know which: if Mintlify refuses that version, its
 * author is told the job has neither (as a refused reply, the edit is theirs to send again).
 */
async function sendTurn(
  ctx: JobsContext,
  input: SteerJobInput,
): Promise<
  | { kind: 'send'; reached(maybe?: 'maybe'): Promise<void>; release(): Promise<void> }
  | { kind: 'not_sent'; outcome: SteerJobOutcome }
> {
  const { atomic } = ctx.store;
  const { channel, messageTs } = input;
  const mine = input.editedTs;
  const notSent = {
    kind: 'not_sent' as const,
    outcome: { kind: 'ignored' as const, why: 'already_sent' as const },
  };
  const owner = `${mine ?? FIRST} ${input.handledBy}`;
  const send = {
    kind: 'send' as const,
    reached: async (maybe?: 'maybe') => {
      const value = maybe ? `${owner} ${MAYBE}` : owner;
      await atomic.setIfAbsent(reachedKey(channel, messageTs), value, REPLY_MARKS_MS).catch(() => false);
    },
    release: async () => {
      await atomic.deleteIfValue(sentKey(channel, messageTs), owner).catch(() => false);
    },
  };
  const claimed = await atomic.holder(sentKey(channel, messageTs));
  // This version's own run, cut short while sending it, run again: an edit made meanwhile does not
  // change what the job may have (its follow-up note tells whether it was sent).
  if (claimed === owner) return send;
  const [latest] = await atomic.indexNewest(editsKey(channel, messageTs), 1);
  if (latest !== undefined && (mine === undefined || tsBefore(mine, latest))) return notSent;
  const waited =
    mine !== undefined && (await atomic.holder(editWaitedKey(channel, messageTs, mine))) !== undefined;
  if (!waited && (await atomic.claim(sentKey(channel, messageTs), owner, REPLY_MARKS_MS))) return send;
  const sent = (await atomic.holder(sentKey(channel, messageTs)))?.split(' ')[0];
  // The version it waited for was refused: the author was told why, and this edit is not sent in its place.
  if (waited && sent === undefined)
    return { kind: 'not_sent', outcome: { kind: 'edit_not_sent', text: EDIT_LOST_TEXT } };
  const earlier = sent !== undefined && mine !== undefined && (sent === FIRST || tsBefore(sent, mine));
  if (!earlier) return notSent;
  // That version is still being sent (Mintlify has not answered): whether the job gets it is not known yet.
  const reached = await atomic.holder(reachedKey(channel, messageTs));
  if (reached === undefined && ctx.now().getTime() - Number(mine) * 1000 < EDIT_WAITS_AT_MOST_MS) {
    await atomic.setIfAbsent(editWaitedKey(channel, messageTs, mine), '1', REPLY_MARKS_MS);
    throw new ReplyEditWaitsError(channel, messageTs);
  }
  if (!(await atomic.setIfAbsent(editToldKey(channel, messageTs), '1', REPLY_MARKS_MS))) return notSent;
  // Its send was cut short, or its answer lost: the job may have it or not, as its author was told.
  const text = reached?.endsWith(` ${MAYBE}`) ? EDIT_AFTER_UNSURE_SEND_TEXT : EDIT_NOT_SENT_TEXT;
  return { kind: 'not_sent', outcome: { kind: 'edit_not_sent', text } };
}

/**
 * When a thread's job was asked for: the message that asked, when the job took the thread so far as
 * context (a mention in a thread); else as its start has it (kept a day); a job older than that,
 * when it was created.
 */
async function jobAskedAt(ctx: JobsContext, record: JobRecord): Promise<number> {
  if (record.contextBefore) return Number(record.contextBefore) * 1000;
  const start = record.startId !== undefined ? await ctx.starts.get(record.startId) : undefined;
  return Date.parse(start?.at ?? record.createdAt);
}
