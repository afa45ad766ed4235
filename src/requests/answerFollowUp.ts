import type { Logger, webApi } from '@slack/bolt';
import { budgetNote } from '../jobs/jobAnswers.js';
import { isDirectMessage } from '../slack/conversations.js';
import type { SteerJobOutcome } from '../jobs/steerJob.js';

const DELIVERED = 'white_check_mark';

/** What an edit of a reply is answered with (its reply had its own answer). */
export const EDIT_ANSWERED: ReadonlySet<SteerJobOutcome['kind']> = new Set([
  'sent',
  'failed',
  'edit_not_sent',
]);

export interface FollowUpPlace {
  channel: string;
  threadTs: string;
  /** The reply itself: it gets the ✅ once the job has it. */
  ts: string;
  user: string;
  /** The thread's first message is the bot's. */
  parentIsBot?: boolean;
  /** The reply mentions the bot (it also arrives as a mention). */
  mentionsBot?: boolean;
}

/**
 * Tells the author how their follow-up went: a ✅ on it, and anything else to them alone (in the
 * bot's DM, where nobody else reads along, as a message that stays rather than one that vanishes).
 */
export async function answerFollowUp(
  client: webApi.WebClient,
  logger: Logger,
  place: FollowUpPlace,
  outcome: SteerJobOutcome,
): Promise<void> {
  const { channel, threadTs, ts, user } = place;
  const toAuthor = (text: string) =>
    isDirectMessage(channel)
      ? client.chat.postMessage({ channel, thread_ts: threadTs, text, unfurl_links: false })
      : client.chat.postEphemeral({ channel, user, thread_ts: threadTs, text });
  if (outcome.kind === 'sent') {
    await client.reactions.add({ channel, timestamp: ts, name: DELIVERED }).catch((error) => {
      logger.warn(`could not mark a follow-up as delivered: ${String(error)}`);
    });
    const note = outcome.budget && budgetNote(outcome.budget);
    if (note) await toAuthor(note);
  } else if ('text' in outcome) {
    // Failed, refused, too old, files only: each says why in its text.
    await toAuthor(outcome.text);
  }
}
