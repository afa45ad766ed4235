import type { Logger, types, webApi } from '@slack/bolt';
import {
  commandWordText,
  DM_HELP,
  JOB_THREAD_HELP,
  MENTION_HELP,
  NO_STOP_TEXT,
  SOMETHING_WRONG,
} from '../jobs/doorAnswers.js';
import { budgetNote } from '../jobs/jobAnswers.js';
import { channelJobList, personJobList } from '../jobs/jobList.js';
import { handleMessageToBot, type MessageToBot, type MessageToBotOutcome } from '../jobs/messageToBot.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import type { UserNames } from '../slack/plainText.js';
import { answerFollowUp, EDIT_ANSWERED } from './answerFollowUp.js';
import { messageLink } from '../slack/links.js';
import { slackErrorCode } from '../slack/slackErrors.js';
import { isStoreUnavailable } from '../store/storeErrors.js';

const THREAD_LEFT_OUT =
  'I couldn’t read this thread, so the job has your message only: reply under its card with what matters from the thread, and it goes to the job.';

/**
 * Tells the person how their mention or DM went, in the thread it belongs to: help for everyone
 * there to read, anything about their own request (a refusal, a failure, a low budget) to them alone.
 */
export async function answerMessageToBot(
  client: webApi.WebClient,
  logger: Logger,
  message: Pick<MessageToBot, 'channel' | 'ts' | 'threadTs' | 'user' | 'door' | 'editedTs'>,
  outcome: MessageToBotOutcome,
): Promise<void> {
  const { channel, ts, user } = message;
  const threadTs = message.threadTs ?? ts;
  const dm = message.door === 'dm';
  // In a channel, answers go under the mention, out of everyone's way; in the bot's DM, a message at
  // its top level is answered there, as a conversation goes (a reply in a thread, in that thread).
  const answerThread = dm && message.threadTs === undefined ? {} : { thread_ts: threadTs };
  // Slack shows an ephemeral in a thread only if that thread has replies: under a message that has
  // none, it shows nobody. Such a message's thread exists once its job's card is posted there.
  // In the bot's DM nobody else reads along: a message that stays, rather than one that vanishes.
  const toPerson = (
    said: string | { text: string; blocks: types.KnownBlock[] },
    inThread = message.threadTs !== undefined,
  ) => {
    const words = typeof said === 'string' ? { text: said } : said;
    const where = inThread ? { thread_ts: threadTs } : {};
    return dm
      ? client.chat.postMessage({ channel, ...words, ...where, unfurl_links: false })
      : client.chat.postEphemeral({ channel, user, ...words, ...where });
  };
  // An edit is read for the instruction alone: one still without (a greeting again) gets no second answer.
  const quietEdit =
    message.editedTs !== undefined &&
    (outcome.kind === 'help' || outcome.kind === 'command_word' || outcome.kind === 'job_list');
  if (quietEdit) return;
  switch (outcome.kind) {
    case 'duplicate':
    case 'job_thread':
    case 'small_talk':
      return;
    case 'command_word':
      // In a channel to the one who asked alone, as the slash command's answers are.
      if (!dm) {
        await toPerson(commandWordText(outcome.word, 'new'));
        return;
      }
      await client.chat.postMessage({
        channel,
        ...answerThread,
        text: commandWordText(outcome.word, 'new'),
        unfurl_links: false,
      });
      return;
    case 'job_list': {
      const list =
        outcome.scope === 'person' ? personJobList(outcome.records) : channelJobList(outcome.records);
      if (!dm) {
        await toPerson(list);
        return;
      }
      await client.chat.postMessage({ channel, ...answerThread, ...list, unfurl_links: false });
      return;
    }
    case 'steered':
      // An edit is read for its new words: answered only when they went to the job, or could not.
      if (message.editedTs !== undefined && !EDIT_ANSWERED.has(outcome.outcome.kind)) return;
      return answerFollowUp(client, logger, { channel, threadTs, ts, user }, outcome.outcome);
    case 'help':
      // In a job's thread the help is for the one who asked, as a reply's is (see steerJob).
      if (outcome.inJobThread && !dm) {
        await toPerson(JOB_THREAD_HELP, true);
        return;
      }
      await client.chat.postMessage({
        channel,
        ...answerThread,
        // A lone "stop": said first that no door can stop a job, as the slash command says it.
        text: `${outcome.stop ? `${NO_STOP_TEXT}\n\n` : ''}${dm ? DM_HELP : MENTION_HELP}`,
        unfurl_links: false,
      });
      return;
    case 'started': {
      const note = [outcome.threadLeftOut ? THREAD_LEFT_OUT : undefined, budgetNote(outcome.budget)]
        .filter((part) => part !== undefined)
        .join(' ');
      const { record } = outcome;
      // Its card went to the person's DM (Slack would not let the bot post here), with a note there
      // saying why: the rest is said there too, since a channel that refused the card may refuse an
      // ephemeral as well.
      if (record.channel !== channel) {
        if (note && record.threadTs) {
          await client.chat.postMessage({
            channel: record.channel,
            thread_ts: record.threadTs,
            text: note,
            unfurl_links: false,
          });
        }
        return;
      }
      // A card of its own in the channel (asked in a digest's thread, or in one that takes no reply):
      // the person is shown where it is, and why.
      if (message.threadTs !== undefined && record.threadTs !== message.threadTs && record.cardTs) {
        const card = `<${messageLink(record.channel, record.cardTs)}|its card>`;
        const why = outcome.digestThread
          ? 'This thread stays the digest’s.'
          : 'Slack doesn’t let me reply in this thread (its first message was deleted, or the thread is locked).';
        await toPerson(
          `I started the job: ${card} is in the channel, and its thread steers it. ${why}${note ? ` ${note}` : ''}`,
          true,
        );
        return;
      }
      if (note) await toPerson(note, true); // under the card
      return;
    }
    case 'refused':
    case 'unposted':
    case 'failed':
      await toPerson(outcome.text);
      return;
  }
}

/**
 * A mention or DM gets no acknowledgement Slack shows (a slash command gets its ephemeral): when
 * its answer (most often the job's card, once Mintlify has created the job) takes longer than this,
 * the message gets a ⏳ meanwhile, taken off once the answer is there.
 */
const SHOW_WORKING_AFTER_MS = 1_500;
const WORKING = 'hourglass_flowing_sand';

function showWorkingIfSlow(
  client: webApi.WebClient,
  logger: Logger,
  message: Pick<MessageToBot, 'channel' | 'ts'>,
): { done(): Promise<void> } {
  const reaction = { channel: message.channel, timestamp: message.ts, name: WORKING };
  let shown: Promise<boolean> | undefined;
  const timer = setTimeout(() => {
    shown = client.reactions.add(reaction).then(
      () => true,
      (error: unknown) => {
        // This message's handling run again (after a crash): the first run's ⏳ is taken off as this one's.
        if (slackErrorCode(error) === 'already_reacted') return true;
        logger.debug(`could not mark a message to the bot as being worked on: ${String(error)}`);
        return false;
      },
    );
  }, SHOW_WORKING_AFTER_MS);
  return {
    async done() {
      clearTimeout(timer);
      if (!shown || !(await shown)) return;
      await client.reactions.remove(reaction).catch((error: unknown) => {
        logger.debug(`could not take the working mark off a message to the bot: ${String(error)}`);
      });
    },
  };
}

/**
 * Both doors that receive a message to the bot (a mention, a DM) run it the same way, with a plain
 * answer to the person if anything unexpected breaks.
 */
export async function handleAndAnswerMessageToBot(
  jobs: JobsContext,
  userNames: UserNames,
  message: MessageToBot,
  startId: string,
): Promise<void> {
  const { slack: client, logger } = jobs;
  const what = message.door === 'dm' ? 'direct message' : 'mention';
  let outcome: MessageToBotOutcome;
  const working = showWorkingIfSlow(client, logger, message);
  try {
    outcome = await handleMessageToBot(jobs, userNames, message, startId);
  } catch (error) {
    await working.done();
    if (isStoreUnavailable(error)) throw error; // the queue job waits for Redis, then resumes
    logger.error(`a ${what} could not be handled: ${String(error)}`);
    const where = {
      channel: message.channel,
      ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
      text: SOMETHING_WRONG,
    };
    // In the bot's DM a message that stays, as its other answers there are.
    await (
      message.door === 'dm'
        ? client.chat.postMessage(where)
        : client.chat.postEphemeral({ ...where, user: message.user })
    ).catch((error: unknown) => logger.warn(`could not answer a message to the bot: ${String(error)}`));
    return;
  }
  await working.done();
  // It was handled (a job may have started): a failed answer is logged, never turned into
  // "something went wrong", which would send the person to do it again.
  await answerMessageToBot(client, logger, message, outcome).catch((error: unknown) => {
    logger.warn(`could not answer a ${what} in ${message.channel}: ${String(error)}`);
  });
}
