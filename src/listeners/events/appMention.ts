import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { type ListenerContext, lastDelivery } from '../context.js';
import { MESSAGE_LOST, tellLost } from './lostMessage.js';
import { messageToBotFrom } from './messageToBotFrom.js';
import { isSaid } from './saidSubtypes.js';

type MentionArgs = SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs;

/**
 * `@docs-agent <instruction>`: at the top of a channel or in a thread, it starts a job whose
 * thread is that one; in a job's thread, it is a follow-up to that job.
 */
export function appMention(ctx: ListenerContext) {
  return async ({ event, body, context, client }: MentionArgs): Promise<void> => {
    // A reply also sent to the channel, one with a file, one written with /me, is still someone
    // talking to the bot; topics, joins and the like are not.
    if (!isSaid(event)) return;
    // Other bots (and workflows) do not start jobs: no loops between bots.
    if (event.bot_id || event.user === context.botUserId) return;
    if (!event.user) return;
    const message = messageToBotFrom(event, event.user, context, 'mention');
    // An edit lost is not worth a word: its message had its answer.
    const tell = message.editedTs
      ? undefined
      : tellLost(
          client,
          { channel: event.channel, user: event.user, threadTs: event.thread_ts, dm: false },
          MESSAGE_LOST,
        );
    await ctx.enqueue({ kind: 'message_to_bot', message }, body.event_id, {
      ifLost: { lastDelivery: lastDelivery(context), ...(tell ? { tell } : {}) },
    });
  };
}

export function registerAppMention(app: App, ctx: ListenerContext): void {
  app.event('app_mention', appMention(ctx));
}
