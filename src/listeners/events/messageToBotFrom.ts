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
    files: event.files,
    door,
    bot: { userId: context.botUserId, botId: context.botId },
  };
}
