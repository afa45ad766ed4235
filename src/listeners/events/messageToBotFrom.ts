import { withoutBotMention } from '../../slack/botMention.js';
import { forwardedText } from '../../slack/messageText.js';
import type { MessageToBot } from '../../jobs/messageToBot.js';

/** As much of the messages forwarded with a mention or DM as the queue carries. */
const FORWARDED_KEPT = 4_000;

/** A mention or a DM as the use case reads it: the bot's own mention taken out of the text. */
export function messageToBotFrom(
  event: {
    channel: string;
    ts: string;
    thread_ts?: string | undefined;
    text: string;
    files?: MessageToBot['files'];
    /** Where Slack keeps a message forwarded with this one (the text is the comment typed with it). */
    attachments?: unknown;
    /** Set on a mention Slack sends again because its message was edited. */
    edited?: { ts: string } | undefined;
  },
  user: string,
  context: { botUserId?: string | undefined; botId?: string | undefined },
  door: MessageToBot['door'],
): MessageToBot {
  // Its words only, kept to what a prompt quotes of a message: the queue carries it.
  const forwarded = forwardedText(event.attachments).slice(0, FORWARDED_KEPT);
  return {
    channel: event.channel,
    ts: event.ts,
    threadTs: event.thread_ts,
    user,
    text: withoutBotMention(event.text, context.botUserId),
    // Their names only (what the agent is told): the queue keeps no private file URLs of Slack's.
    ...(event.files ? { files: event.files.map(({ name, title }) => ({ name, title })) } : {}),
    ...(forwarded ? { forwarded } : {}),
    door,
    ...(event.edited ? { editedTs: event.edited.ts } : {}),
    bot: { userId: context.botUserId, botId: context.botId },
  };
}
