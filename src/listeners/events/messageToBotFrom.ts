import { withoutBotMention } from '../../slack/botMention.js';
import type { MessageToBot } from '../../jobs/messageToBot.js';

/** A mention or a DM as the use case reads it: the bot's own mention taken out of the text. */
export function messageToBotFrom(
  event: {
    channel: string;
    ts: string;
    thread_ts?: string | undefined;
    text: string;
    files?: MessageToBot['files'];
    /** Set on a mention Slack sends again because its message was edited. */
    edited?: { ts: string } | undefined;
  },
  user: string,
  context: { botUserId?: string | undefined; botId?: string | undefined },
  door: MessageToBot['door'],
): MessageToBot {
  return {
    channel: event.channel,
    ts: event.ts,
    threadTs: event.thread_ts,
    user,
    text: withoutBotMention(event.text, context.botUserId),
    // Their names only (what the agent is told): the queue keeps no private file URLs of Slack's.
    ...(event.files ? { files: event.files.map(({ name, title }) => ({ name, title })) } : {}),
    door,
    ...(event.edited ? { editedTs: event.edited.ts } : {}),
    bot: { userId: context.botUserId, botId: context.botId },
  };
}
