import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { MessageToBot } from '../../jobs/messageToBot.js';
import { withoutBotMention } from '../../slack/botMention.js';
import type { ListenerContext } from '../context.js';
import { handleAndAnswerMessageToBot } from './answerMessageToBot.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/**
 * A message in the bot's DM starts a job, whose card is the reply under it; `help` explains.
 * Replies in a job's thread there are the thread-reply listener's, as in channels.
 */
export function registerDirectMessage(app: App, ctx: ListenerContext): void {
  app.event('message', async ({ event, client, context, logger }: MessageArgs) => {
    if (event.channel_type !== 'im') return;
    if (event.subtype !== undefined && event.subtype !== 'file_share') return; // edits, deletions...
    if ('bot_id' in event && event.bot_id) return; // our own cards and answers among them
    if (!('user' in event) || !event.user || typeof event.text !== 'string') return;
    const message: MessageToBot = {
      channel: event.channel,
      ts: event.ts,
      threadTs: event.thread_ts,
      user: event.user,
      text: withoutBotMention(event.text, context.botUserId),
      files: event.files,
      door: 'dm',
      bot: { userId: context.botUserId, botId: context.botId },
    };

    await handleAndAnswerMessageToBot(ctx, client, logger, message);
  });
}
