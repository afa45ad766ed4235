import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { withoutBotMention } from '../../slack/botMention.js';
import { betweenPeople, smallTalkOf } from '../../jobs/smallTalk.js';
import { JOB_CARD_MARK_TYPE } from '../../slack/postedMessages.js';
import { forwardedText } from '../../slack/messageText.js';
import { readChannelMessage } from '../../slack/threadMessages.js';
import { type ListenerContext, lastDelivery } from '../context.js';
import { REPLY_LOST, tellLost } from './lostMessage.js';
import { threadParentUser } from './threadParent.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/**
 * A reply in a thread may steer a job: queued for the worker, which knows the job threads.
 * Everything else in channels is none of our business.
 */
export function threadReply(ctx: ListenerContext) {
  return async ({ event, body, context, client }: MessageArgs): Promise<void> => {
    // A reply with a file, or also sent to the channel, is still a reply; edits, deletions, joins are not.
    if (event.subtype !== undefined && event.subtype !== 'file_share' && event.subtype !== 'thread_broadcast')
      return;
    if ('bot_id' in event && event.bot_id) return;
    if (!event.thread_ts || event.thread_ts === event.ts) return; // top-level message
    if (!event.user || typeof event.text !== 'string') return;
    const { channel, ts, thread_ts: threadTs, user } = event;
    // A reply that mentions the bot also arrives as app_mention: both give the job the same words.
    const text = withoutBotMention(event.text, context.botUserId);
    const parentUser = threadParentUser(event);
    const place = {
      channel,
      threadTs,
      ts,
      user,
      parentIsBot: parentUser !== undefined && parentUser === context.botUserId,
      mentionsBot: context.botUserId !== undefined && event.text.includes(`<@${context.botUserId}`),
    };
    // Files are named for the job, as from a mention (their names only: the agent cannot open them).
    const files =
      'files' in event && event.files ? event.files.map(({ name, title }) => ({ name, title })) : [];
    // A message forwarded with it, as from a mention (kept to what a prompt quotes of a message).
    const forwarded = forwardedText('attachments' in event ? event.attachments : undefined).slice(0, 4_000);
    // Not acknowledged until queued: if the queue cannot take it, Slack delivers it again (over
    // HTTP; in Socket Mode, where the ack goes first, the web role holds it until the queue takes it).
    // Lost, its author hears of it where the reply was surely for a job: words for the agent (not an
    // aside, a thanks, a call to people) under a job's card, as Slack says its mark is (Redis is away).
    // A reply that also mentions the bot is told by the mention's listener, one in the bot's DM by the DM's.
    const forAJob =
      place.parentIsBot &&
      !place.mentionsBot &&
      event.channel_type !== 'im' &&
      !betweenPeople(text) &&
      smallTalkOf(text) === undefined;
    const tell = forAJob
      ? async () => {
          const parent = await readChannelMessage(client, channel, threadTs);
          if (parent?.metadata?.event_type !== JOB_CARD_MARK_TYPE) return;
          await tellLost(client, { channel, user, threadTs, dm: false }, REPLY_LOST)();
        }
      : undefined;
    await ctx.enqueue(
      {
        kind: 'thread_reply',
        place,
        text,
        ...(files.length > 0 ? { files } : {}),
        ...(forwarded ? { forwarded } : {}),
      },
      body.event_id,
      { ifLost: { lastDelivery: lastDelivery(context), ...(tell ? { tell } : {}) } },
    );
  };
}

export function registerThreadReply(app: App, ctx: ListenerContext): void {
  app.event('message', threadReply(ctx));
}
