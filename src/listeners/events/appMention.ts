import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { messageToBotFrom } from './messageToBotFrom.js';

type MentionArgs = SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs;

/**
 * `@docs-agent <instruction>`: at the top of a channel or in a thread, it starts a job whose
 * thread is that one; in a job's thread, it is a follow-up to that job.
 */
export function appMention(ctx: ListenerContext) {
  return async ({ event, body, context }: MentionArgs): Promise<void> => {
    // Slack sends app_mention when someone typed the bot's name, whatever the message's subtype (a
    // reply also sent to the channel, one with a file). Other bots (and workflows) do not start
    // jobs: no loops between bots.
    if (event.bot_id || event.subtype === 'bot_message') return;
    if (!event.user) return;
    const message = messageToBotFrom(event, event.user, context, 'mention');
    await ctx.enqueue({ kind: 'message_to_bot', message }, body.event_id);
  };
}

export function registerAppMention(app: App, ctx: ListenerContext): void {
  app.event('app_mention', appMention(ctx));
}
