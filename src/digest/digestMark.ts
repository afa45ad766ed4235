import type { webApi } from '@slack/bolt';
import type { MessageMark } from '../slack/postedMessages.js';
import { messageText } from '../slack/messageText.js';
import { readChannelMessage } from '../slack/threadMessages.js';
import { type DigestPeriod, periodKey } from './period.js';

/** The scheduled digest's: the one posted once per period and channel. */
const SCHEDULED = 'docs_agent_digest';
/** `/docs-agent digest`'s, of another type: the scheduled digest's search for its own post never finds it. */
const ON_REQUEST = 'docs_agent_digest_on_request';

/**
 * Every digest carries a mark as message metadata: a scheduled post whose record was lost is found
 * again by it, and a job started from a digest's thread knows the thread is the digest's.
 */
export function digestMark(period: DigestPeriod, channel: string, onRequest = false): MessageMark {
  return {
    event_type: onRequest ? ON_REQUEST : SCHEDULED,
    event_payload: { period: periodKey(period), channel },
  };
}

/**
 * The digest the bot posted at `ts`, with its words as its blocks show them (its text is only the
 * notification's line); undefined when the message is not one, or Slack cannot say. Its thread is
 * for people to talk about the digest: a job started from it gets a card of its own rather than
 * taking the thread.
 */
export async function postedDigest(
  slack: Pick<webApi.WebClient, 'conversations'>,
  channel: string,
  ts: string,
  botId: string,
): Promise<{ words: string } | undefined> {
  const message = await readChannelMessage(slack, channel, ts).catch(() => undefined);
  if (!message || message.bot_id !== botId) return undefined;
  const type = (message.metadata as { event_type?: string } | undefined)?.event_type;
  if (type !== SCHEDULED && type !== ON_REQUEST) return undefined;
  return { words: messageText({ blocks: message.blocks }) || (message.text ?? '') };
}
