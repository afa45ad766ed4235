import { postedDigest } from '../digest/digestMark.js';
import { permalinkOf } from '../slack/links.js';
import { slackToPlainText, type UserNames } from '../slack/plainText.js';
import { readThread, type ThreadMessage, tsBefore } from '../slack/threadMessages.js';
import { firstSeenBy, firstSighting } from '../store/dedupe.js';
import { isStoreUnavailable } from '../store/storeErrors.js';
import { accessRefusal } from './access.js';
import { followUnpostedInDm } from './followInDm.js';
import { DM_FILES_ONLY_TEXT, FILES_ONLY_TEXT } from './jobAnswers.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { EditWaitsError, ThreadStartingError } from './jobStarts.js';
import { commandWordOf, isStopWord, mistypedCommandOf, onlyMentions, smallTalkOf } from './smallTalk.js';
import { type StartJobOutcome, startJob } from './startJob.js';
import { startsWithJobCard, type SteerJobOutcome, steerJob } from './steerJob.js';
import {
  type BotIdentity,
  digestSection,
  filesNote,
  forwardedSection,
  promptWithContext,
  threadSection,
  type Transcript,
  transcriptOf,
} from './threadContext.js';

/** A message addressed to the bot: a mention in a channel, or a message in its DM. */
export interface MessageToBot {
  channel: string;
  ts: string;
  /** The root of the thread the message is in, when it is in one. */
  threadTs: string | undefined;
  user: string;
  /** As Slack delivered it, with the bot's own mention removed. */
  text: string;
  files?: ThreadMessage['files'];
  /** A message forwarded with it (Slack markup, with whose it is): `text` is the comment typed with it. */
  forwarded?: string;
  door: 'mention' | 'dm';
  /** A DM reply whose thread's first message is the bot's (perhaps a job card that went to the DM). */
  parentIsBot?: boolean;
  /** A message Slack sent again because it was edited (a mention marked edited, a DM's change): the edit's time. */
  editedTs?: string;
  bot: BotIdentity;
}

export type MessageToBotOutcome =
  /** Another delivery of the same message (a retry, or the same message as another event) was handled. */
  | { kind: 'duplicate' }
  /** A DM reply in a job's thread, or under a forgotten job's card: the thread-reply listener owns those. */
  | { kind: 'job_thread' }
  | { kind: 'refused'; text: string }
  /** `inJobThread`: asked in a job's thread, where a mention is a follow-up. */
  | { kind: 'help'; inJobThread?: true; stop?: true }
  /** `digest` alone: a word for `/docs-agent`, not an instruction. */
  | { kind: 'command_word'; word: 'digest' }
  /** `status` alone: the channel's recent jobs (a mention), or the person's own (the DM). */
  | { kind: 'job_list'; records: JobRecord[]; scope: 'channel' | 'person' }
  /** Thanks, an OK, an emoji: nothing for the agent, and nothing to answer. */
  | { kind: 'small_talk' }
  | { kind: 'steered'; outcome: SteerJobOutcome }
  /**
   * `threadLeftOut`: asked in a thread Slack would not let the bot read; the job has the message only.
   * `digestThread`: asked in a digest's thread, which stays the digest's (the card is in the channel).
   */
  | (StartJobOutcome & { threadLeftOut?: true; digestThread?: true });

const THREAD_TITLE = 'The Slack thread so far, for context (oldest first)';
const DAY_MS = 24 * 3_600_000;
/**
 * A message to the bot that started nothing (answered with the help alone, or refused by Mintlify
 * before it made a job): an edit of it may still start its job.
 */
const startedNothingKey = (channel: string, ts: string) => `message-helped:${channel}:${ts}`;
/** The edit of such a message that starts its job: one, however many edits come. */
const editStartKey = (channel: string, ts: string) => `message-edit:${channel}:${ts}`;
/**
 * Written once a message's own handling is over, whatever came of it: until then an edit of it waits,
 * since the message may yet start nothing (then the edit is the person's next try).
 */
const settledKey = (channel: string, ts: string) => `message-settled:${channel}:${ts}`;
/** How long an edit waits for the start of the message it edits, at most (a start whose run died). */
const EDIT_WAITS_AT_MOST_MS = 2 * 60_000;
/** As many as `/docs-agent status` lists. */
const JOB_LIST_SIZE = 10;

/**
 * A message to the bot starts a job (with the thread so far as context when it is a reply), or,
 * in a job's thread, steers that job. Whichever way Slack delivers the message, and however
 * often, it acts once: the dedupe key is the one `steerJob` uses for the same message.
 */
export async function handleMessageToBot(
  ctx: JobsContext,
  userNames: UserNames,
  input: MessageToBot,
  /** The queue job handling this delivery: it names the start, and it may run again after a crash. */
  startId: string,
): Promise<MessageToBotOutcome> {
  // An edit of a message the bot never had is that message, as first seen: written without the bot's
  // mention, which the edit adds, or before the bot was in the channel.
  if (input.editedTs !== undefined && (await neverSeen(ctx, input)))
    input = { ...input, editedTs: undefined };
  const settled = () =>
    ctx.store.atomic.setIfAbsent(settledKey(input.channel, input.ts), startId, DAY_MS).catch(() => false);
  let outcome: MessageToBotOutcome;
  try {
    outcome = await handleOnce(ctx, userNames, input, startId);
  } catch (error) {
    // Run again shortly (Redis away, a start to wait for), or over for good: an edit stops waiting.
    if (input.editedTs === undefined && !isStoreUnavailable(error)) await settled();
    throw error;
  }
  // Another delivery of it is under way, or over: that one says when it is settled.
  if (input.editedTs === undefined && outcome.kind !== 'duplicate') await settled();
  return outcome;
}

async function handleOnce(
  ctx: JobsContext,
  userNames: UserNames,
  input: MessageToBot,
  startId: string,
): Promise<MessageToBotOutcome> {
  const { channel, ts } = input;
  const reply = input.threadTs !== undefined && input.threadTs !== ts;

  // A job's thread is steered, unless this delivery began a start there itself (run again after
  // its lease was lost, its own job's card may have made the thread a job's since): that start answers.
  const talk = smallTalkOf(input.text);
  const jobThread =
    reply &&
    input.threadTs !== undefined &&
    (await ctx.records.byThread(channel, input.threadTs)) !== undefined &&
    !(await ctx.starts.get(startId));
  // A message whose own thread became a job's meanwhile: a reply under it, handled first, started that
  // job with this message as its thread so far. Its job has it (this start, run again, would wait for
  // the thread for ever).
  if (!reply && !(await ctx.starts.get(startId))) {
    const own = await ctx.records.byThread(channel, ts);
    if (own && own.startId !== startId) return { kind: 'duplicate' };
  }
  // The thread this message (or its edit) would start a job in (its own, at the top level) is held from
  // here, before anything slow (naming the people it mentions, reading its thread): a reply written
  // meanwhile, or handled first after the bot was down, waits for the job rather than find none. Let go
  // once answered without a start (a start lets go once its record names the thread); held by another
  // start, the start below waits for that one's job. A run that throws keeps it (it lapses): another
  // run of the same request, after a crash, may hold it still.
  const place = jobThread ? undefined : (input.threadTs ?? ts);
  if (place === undefined || !(await ctx.starts.claimThread(channel, place, startId))) {
    return answerMessage(ctx, userNames, input, startId, { reply, talk, jobThread });
  }
  const started = { toStart: false };
  const outcome = await answerMessage(ctx, userNames, input, startId, { reply, talk, jobThread }, started);
  if (!started.toStart) await ctx.starts.releaseThread(channel, place, startId).catch(() => {}); // else it lapses
  return outcome;
}

async function answerMessage(
  ctx: JobsContext,
  userNames: UserNames,
  input: MessageToBot,
  startId: string,
  seen: { reply: boolean; talk: ReturnType<typeof smallTalkOf>; jobThread: boolean },
  started: { toStart: boolean } = { toStart: false },
): Promise<MessageToBotOutcome> {
  const { channel, ts, user } = input;
  const { reply, talk, jobThread } = seen;
  const instruction = (await slackToPlainText(input.text, userNames)).trim();
  if (jobThread && input.threadTs) {
    if (input.door === 'dm') return { kind: 'job_thread' };
    // An empty mention, a greeting, "help" or a question about the bot asks for the thread's help.
    // The rest is the job's (a thanks, `status`: `steerJob` knows what to do with them), and so is a
    // message forwarded with the mention, words or none, as a reply that forwards one without it is.
    const shared = Boolean(input.files?.length) || Boolean(input.forwarded);
    const forTheJob = (instruction !== '' || Boolean(input.forwarded)) && !(talk === 'greeting' && !shared);
    // An edit is the reply in its new words, as a reply's is (see steerJob): sent if the job does not
    // have the mention yet (it got the help alone, or files only, or still waits to be sent); else its
    // author is told the job has it as first written. An edit to a greeting again changes nothing.
    if (input.editedTs !== undefined && !forTheJob) return { kind: 'duplicate' };
    if (forTheJob) {
      const steerInput = {
        channel,
        threadTs: input.threadTs,
        messageTs: ts,
        user,
        text: input.text,
        ...(input.files ? { files: input.files } : {}),
        ...(input.forwarded ? { forwarded: input.forwarded } : {}),
        handledBy: startId,
        ...(input.editedTs !== undefined ? { editedTs: input.editedTs } : {}),
      };
      return { kind: 'steered', outcome: await steerJob(ctx, userNames, steerInput) };
    }
  }

  // A DM reply under a message whose job is starting is that job's thread reply: it waits
  // for the job (then the first check above hands it to the thread-reply listener). Going on would
  // take the message's dedupe key, and the thread-reply listener would then never send it.
  if (
    reply &&
    input.door === 'dm' &&
    input.threadTs &&
    (await ctx.starts.threadStarting(channel, input.threadTs, startId))
  ) {
    throw new ThreadStartingError(channel, input.threadTs);
  }

  // A DM reply under a job card of the bot's (one that went to the DM at its top level) whose job is
  // forgotten: the thread-reply listener tells its author the job is too old to steer. Started here,
  // it would be a job of the reply alone (the card, the bot's, is no context for the agent).
  if (
    reply &&
    input.door === 'dm' &&
    input.parentIsBot === true &&
    input.threadTs &&
    (await startsWithJobCard(ctx.slack, channel, input.threadTs))
  ) {
    return { kind: 'job_thread' };
  }

  if (input.editedTs !== undefined) {
    // Slack sends a mention again when its message is edited (a DM, as a change of the message):
    // one that started nothing (a bare mention, a greeting, answered with the help; an instruction
    // Mintlify refused) is read again for the instruction typed in since, until one edit starts its
    // job (claimed below, at the start). Any other edit (a typo fixed in a message that started a
    // job) changes nothing, nor does one of a message whose thread has a job by now (a reply there
    // started it).
    const startedNothing = (await ctx.store.atomic.holder(startedNothingKey(channel, ts))) !== undefined;
    if (!startedNothing || (await ctx.records.byThread(channel, input.threadTs ?? ts)) !== undefined) {
      // The message's own handling is not over (its thread read, Mintlify asked): if it ends in a
      // refusal, this edit is the person's next try.
      const original = await firstSeenBy(ctx.store.atomic, `message:${channel}:${ts}`);
      const notOver = async () => (await ctx.store.atomic.holder(settledKey(channel, ts))) === undefined;
      if (!startedNothing && (await editWaitsFor(ctx, input.editedTs, original, notOver))) {
        throw new EditWaitsError(channel, ts);
      }
      return { kind: 'duplicate' };
    }
  } else if (!(await firstSighting(ctx.store.atomic, `message:${channel}:${ts}`, { by: startId }))) {
    return { kind: 'duplicate' };
  }
  const refusal = accessRefusal(ctx.config.access, user, channel);
  if (refusal) return { kind: 'refused', text: refusal };
  const files = filesNote(input.files);
  // A greeting or a thanks with files is the files alone: in the DM nothing starts, and in a job's
  // thread nothing is sent, each told why (a top-level mention with only a file gets the help).
  if ((instruction === '' || talk) && files !== '') {
    // Told to say in words what to change: its edit with the words starts the job, or is sent to it (see above).
    if (input.editedTs === undefined && (input.door === 'dm' || jobThread))
      await ctx.store.atomic.setIfAbsent(startedNothingKey(channel, ts), 'files', DAY_MS);
    if (input.door === 'dm') return { kind: 'refused', text: DM_FILES_ONLY_TEXT };
    if (jobThread) return { kind: 'refused', text: FILES_ONLY_TEXT };
  }
  // A lone "stop" or "cancel" outside a job's thread has no job to stop: it would start one.
  const noJobToStop = !jobThread && isStopWord(instruction);
  if (noJobToStop) return { kind: 'help', stop: true };
  // Only names people (`@cat`): nothing there says what to change, as a reply of only that is between people.
  // A subcommand mistyped (`statsu`) is no instruction either.
  const mistyped = !jobThread && files === '' && mistypedCommandOf(instruction) !== undefined;
  if (instruction === '' || talk === 'greeting' || (!jobThread && onlyMentions(input.text)) || mistyped) {
    // Its edit, if one comes with the instruction, starts the job or is sent to it (see above).
    if (input.editedTs === undefined)
      await ctx.store.atomic.setIfAbsent(startedNothingKey(channel, ts), 'help', DAY_MS);
    return jobThread ? { kind: 'help', inJobThread: true } : { kind: 'help' };
  }
  if (talk === 'thanks') return { kind: 'small_talk' };
  const word = files === '' ? commandWordOf(instruction) : undefined;
  if (word === 'status') {
    // As `/docs-agent status` answers in a channel; in the DM, where no channel is meant, their own.
    const scope = input.door === 'dm' ? 'person' : 'channel';
    const records =
      scope === 'person'
        ? await ctx.records.recentForUser(user, JOB_LIST_SIZE)
        : await ctx.records.recentInChannel(channel, JOB_LIST_SIZE);
    return { kind: 'job_list', records, scope };
  }
  if (word) return { kind: 'command_word', word };
  // One edit starts the job, however many come (a Slack retry of this one is the same claimant).
  if (
    input.editedTs !== undefined &&
    !(await ctx.store.atomic.claim(editStartKey(channel, ts), startId, DAY_MS))
  ) {
    // The edit that claimed it may be reading the thread still, or asking Mintlify: if Mintlify
    // refuses it, it gives the claim back, and this edit is tried.
    const earlier = await ctx.store.atomic.holder(editStartKey(channel, ts));
    const notBegun = async () => earlier !== undefined && !(await ctx.starts.get(earlier));
    if (await editWaitsFor(ctx, input.editedTs, earlier, notBegun)) throw new EditWaitsError(channel, ts);
    return { kind: 'duplicate' };
  }

  const asked = files ? `${instruction}\n${files}` : instruction;
  // A job starts in the thread from here: held for the job since the handling began (see handleOnce),
  // or, when another start held it then, waited for now. startJob holds it on (nothing here throws: a
  // read Slack refuses leaves its part out); a digest's thread is given back below.
  if (reply && input.threadTs && !(await ctx.starts.claimThread(channel, input.threadTs, startId))) {
    throw new ThreadStartingError(channel, input.threadTs);
  }
  const [thread, link] = await Promise.all([
    reply && input.threadTs ? earlierMessages(ctx, userNames, input) : undefined,
    permalinkOf(ctx.slack, ctx.logger, { channel, ts, threadTs: input.threadTs }),
  ]);
  // A digest's thread is for people to talk about the digest: a job started there gets a card of its
  // own in the channel, linking the message, rather than taking the thread over. The digest itself
  // (the bot's message, left out of the thread's transcript) is what "the top page here" means.
  const digest =
    reply && input.threadTs !== undefined
      ? await postedDigest(ctx.slack, channel, input.threadTs, ctx.botId)
      : undefined;
  const digestThread = digest !== undefined;
  // Its job's card goes in the channel: nothing in the digest's thread waits for it.
  if (digestThread && input.threadTs) {
    await ctx.starts.releaseThread(channel, input.threadTs, startId).catch(() => {}); // else it lapses
  }
  const forwarded = input.forwarded ? (await slackToPlainText(input.forwarded, userNames)).trim() : '';
  const sections = [
    ...(forwarded ? [forwardedSection(forwarded)] : []),
    ...(digest ? [digestSection((await slackToPlainText(digest.words, userNames)).trim())] : []),
    ...(reply && input.threadTs ? [threadSection(THREAD_TITLE, thread)] : []),
  ];
  // The card links the message wherever it is not under it: in the channel (a digest's thread, a
  // thread that takes no reply), or in the person's DM (a channel where the bot may not post).
  const about = {
    link,
    what: 'message' as const,
    channel,
    ...(digestThread ? {} : { under: true as const }),
  };
  started.toStart = true;
  let outcome = await startJob(
    ctx,
    {
      prompt: promptWithContext(asked, sections),
      displayPrompt: instruction,
      requestedBy: user,
      channel,
      ...(digestThread ? {} : { threadTs: reply ? input.threadTs : ts }),
      about,
      // The replies before this message are the job's context already: one delivered late is not sent again.
      ...(thread ? { contextBefore: ts } : {}),
      door: input.door,
    },
    startId,
  );
  // Slack refused the card in the channel (one where posting is limited: the bot is a member, since
  // the mention reached it): the job is followed in the person's DM, as the other doors' jobs are.
  // In the bot's DM the card was refused where the DM would post it.
  if (outcome.kind === 'unposted' && input.door === 'mention') {
    const moved = await followUnpostedInDm(ctx, outcome);
    if (moved) outcome = { kind: 'started', record: moved, budget: outcome.budget };
  }
  if (outcome.kind === 'started') {
    return {
      ...outcome,
      // The person believes the agent has the thread: they are told it has not, as the shortcut tells it.
      ...(reply && thread === undefined ? { threadLeftOut: true as const } : {}),
      ...(digestThread ? { digestThread: true as const } : {}),
    };
  }
  // Mintlify refused it and made no job ("please rephrase", a limit, a key): editing the message is
  // a way to try again, as for a message that started nothing.
  if (outcome.kind === 'failed' && outcome.madeNothing) {
    const { atomic } = ctx.store;
    await Promise.all([
      atomic.setIfAbsent(startedNothingKey(channel, ts), 'refused', DAY_MS),
      input.editedTs !== undefined && atomic.deleteIfValue(editStartKey(channel, ts), startId),
    ]).catch((error: unknown) => {
      ctx.logger.warn(`could not let an edit of ${channel}/${ts} try again: ${String(error)}`);
    });
  }
  return outcome;
}

/**
 * Whether the bot never had the message an edit is of: no delivery of it seen, no answer given, no
 * job in its thread. Known for a day after it was written (the day a message's sighting is kept): an
 * older one may have been seen and forgotten since.
 */
async function neverSeen(ctx: JobsContext, input: MessageToBot): Promise<boolean> {
  const { channel, ts } = input;
  if (ctx.now().getTime() - Number(ts) * 1000 >= DAY_MS) return false;
  const [seen, answered, job] = await Promise.all([
    firstSeenBy(ctx.store.atomic, `message:${channel}:${ts}`),
    ctx.store.atomic.holder(startedNothingKey(channel, ts)),
    // A job that has left the thread since (its card moved to the DM) had the message all the same.
    ctx.records.hadThread(channel, input.threadTs ?? ts),
  ]);
  return seen === undefined && answered === undefined && !job;
}

/** The thread before this message; undefined when Slack would not give it (the job starts anyway). */
async function earlierMessages(
  ctx: JobsContext,
  userNames: UserNames,
  input: MessageToBot,
): Promise<Transcript | undefined> {
  try {
    const { messages, cut } = await readThread(ctx.slack, input.channel, input.threadTs ?? input.ts);
    const earlier = messages.filter((message) => tsBefore(message.ts, input.ts));
    return await transcriptOf(earlier, { bot: input.bot, userNames, cut });
  } catch (error) {
    ctx.logger.warn(
      `could not read the thread ${input.channel}/${input.threadTs} for context: ${String(error)}`,
    );
    return undefined;
  }
}

/**
 * Whether an edit waits for the start `startId` (the message's own, or another edit's): while that
 * start holds its lease, or `before` says it has not got that far yet; for two minutes from the edit
 * at most (its run may have died).
 */
async function editWaitsFor(
  ctx: JobsContext,
  editedTs: string,
  startId: string | undefined,
  before: () => Promise<boolean>,
): Promise<boolean> {
  if (startId === undefined) return false;
  if (ctx.now().getTime() - Number(editedTs) * 1000 >= EDIT_WAITS_AT_MOST_MS) return false;
  return (await ctx.starts.underWay(startId)) || (await before());
}
