import type { Logger, webApi } from '@slack/bolt';
import { DM_HELP, MENTION_HELP } from '../../jobs/doorAnswers.js';
import { budgetNote } from '../../jobs/jobAnswers.js';
import type { MessageToBot, MessageToBotOutcome } from '../../jobs/messageToBot.js';
import { answerFollowUp } from './answerFollowUp.js';

/**
 * Tells the person how their mention or DM went, in the thread it belongs to: help for everyone
 * there to read, anything about their own request (a refusal, a failure, a low budget) to them alone.
 */
export async function answerMessageToBot(
  client: webApi.WebClient,
  logger: Logger,
  message: Pick<MessageToBot, 'channel' | 'ts' | 'threadTs' | 'user' | 'door'>,
  outcome: MessageToBotOutcome,
): Promise<void> {
  const { channel, ts, user } = message;
  const threadTs = message.threadTs ?? ts;
  const toPerson = (text: string) => client.chat.postEphemeral({ channel, user, thread_ts: threadTs, text });
  switch (outcome.kind) {
    case 'duplicate':
    case 'job_thread':
      return;
    case 'steered':
      return answerFollowUp(client, logger, { channel, threadTs, ts, user }, outcome.outcome);
    case 'help':
      await client.chat.postMessage({
        channel,
        thread_ts: threadTs,
        text: message.door === 'dm' ? DM_HELP : MENTION_HELP,
        unfurl_links: false,
      });
      return;
    case 'started': {
      const note = budgetNote(outcome.budget);
      if (note) await toPerson(note);
      return;
    }
    case 'refused':
    case 'unposted':
    case 'failed':
      await toPerson(outcome.text);
      return;
  }
}
