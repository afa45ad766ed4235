import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { type ListenerContext, lastDelivery } from '../context.js';
import { authorEdit } from './authorEdit.js';
import { MESSAGE_LOST, REPLY_LOST, tellLost } from './lostMessage.js';
import { messageToBotFrom } from './messageToBotFrom.js';
import { threadParentUser } from './threadParent.js';
import { isSaid } from './saidSubtypes.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/**
 * A message in the bot's DM starts a job, whose card is the reply under it; `help` explains.
 * Replies in a job's thread there are the thread-reply listener's, as in channels.
 */
export function directMessage(ctx: ListenerContext) {
  return async ({ event, body, context, client }: MessageArgs): Promise<void> => {
    if (event.channel_type !== 'im') return;
    if (event.subtype === 'message_changed') return edited(ctx, event, body.event_id, context);
    // Deletions, joins... are not messages to the bot; a reply also sent to the conversation is.
    if (!isSaid(event)) return;
    if ('bot_id' in event && event.bot_id) return; // our own cards and answers among them
    if (!('user' in event) || !event.user || typeof event.text !== 'string') return;
    const message = messageToBotFrom({ ...event, text: event.text }, event.user, context, 'dm');
    // A reply under one of the bot's messages may be under a job card that went to the DM (see handleMessageToBot).
    const parent = threadParentUser(event);
    if (parent !== undefined && parent === context.botUserId) message.parentIsBot = true;
    const place = { channel: event.channel, user: event.user, threadTs: event.thread_ts, dm: true };
    // A reply in one of the DM's threads (a job's) is lost as a reply.
    const lost = event.thread_ts !== undefined && event.thread_ts !== event.ts ? REPLY_LOST : MESSAGE_LOST;
    await ctx.enqueue({ kind: 'message_to_bot', message }, body.event_id, {
      ifLost: { lastDelivery: lastDelivery(context), tell: tellLost(client, place, lost) },
    });
  };
}

/**
 * A message of the DM's conversation edited by its author: handed on as an edit, which starts a job
 * only if the message had got the help alone (see `handleMessageToBot`). Slack's own changes (a link
 * preview added) carry no `edited`; a reply in a thread is that thread's.
 */
async function edited(
  ctx: ListenerContext,
  event: { channel: string; message?: unknown },
  eventId: string,
  context: MessageArgs['context'],
): Promise<void> {
  const changed = authorEdit(event);
  if (!changed) return;
  if (changed.thread_ts !== undefined && changed.thread_ts !== changed.ts) return;
  const { ts, text, attachments, edited: edit } = changed;
  // Its files are named as the message's own are: an edit that adds words to a file is what starts its job.
  const files = Array.isArray(changed.files) ? changed.files : undefined;
  const message = messageToBotFrom(
    { channel: event.channel, ts, text, attachments, edited: edit, ...(files ? { files } : {}) },
    changed.user,
    context,
    'dm',
  );
  // An edit lost is not worth a word: its message had its answer.
  await ctx.enqueue({ kind: 'message_to_bot', message }, eventId, {
    ifLost: { lastDelivery: lastDelivery(context) },
  });
}

export function registerDirectMessage(app: App, ctx: ListenerContext): void {
  app.event('message', directMessage(ctx));
}
