import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { messageToBotFrom } from './messageToBotFrom.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/**
 * A message in the bot's DM starts a job, whose card is the reply under it; `help` explains.
 * Replies in a job's thread there are the thread-reply listener's, as in channels.
 */
export function directMessage(ctx: ListenerContext) {
  return async ({ event, body, context }: MessageArgs): Promise<void> => {
    if (event.channel_type !== 'im') return;
    // Edits, deletions... are not messages to the bot; a reply also sent to the conversation is.
    if (event.subtype !== undefined && event.subtype !== 'file_share' && event.subtype !== 'thread_broadcast')
      return;
    if ('bot_id' in event && event.bot_id) return; // our own cards and answers among them
    if (!('user' in event) || !event.user || typeof event.text !== 'string') return;
    const message = messageToBotFrom({ ...event, text: event.text }, event.user, context, 'dm');
    await ctx.enqueue({ kind: 'message_to_bot', message }, body.event_id);
  };
}

export function registerDirectMessage(app: App, ctx: ListenerContext): void {
  app.event('message', directMessage(ctx));
}
