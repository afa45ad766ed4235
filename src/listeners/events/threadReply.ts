import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { withoutBotMention } from '../../slack/botMention.js';
import { betweenPeople, smallTalkOf } from '../../jobs/smallTalk.js';
import { JOB_CARD_MARK_TYPE } from '../../slack/postedMessages.js';
import { forwardedText } from '../../slack/messageText.js';
import { readChannelMessage } from '../../slack/threadMessages.js';
import { type ListenerContext, lastDelivery } from '../context.js';
import { REPLY_LOST, tellLost } from './lostMessage.js';
import { threadParentUser } from './threadParent.js';
import { isSaid } from './saidSubtypes.js';
import { authorEdit } from './authorEdit.js';
import type { SlackRequest } from '../../requests/slackRequest.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;
type ThreadReplyRequest = Extract<SlackRequest, { kind: 'thread_reply' }>;

/**
 * A reply in a thread may steer a job: queued for the worker, which knows the job threads.
 * Everything else in channels is none of our business.
 */
export function threadReply(ctx: ListenerContext) {
  return async ({ event, body, context, client }: MessageArgs): Promise<void> => {
    if (event.subtype === 'message_changed') return editedReply(ctx, event, body.event_id, context);
    // A reply with a file, also sent to the channel, or written with /me, is still a reply; deletions, joins are not.
    if (!isSaid(event)) return;
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
      replyRequest(place, text, {
        files: 'files' in event ? event.files : undefined,
        attachments: 'attachments' in event ? event.attachments : undefined,
      }),
      body.event_id,
      { ifLost: { lastDelivery: lastDelivery(context), ...(tell ? { tell } : {}) } },
    );
  };
}

/**
 * A reply in a thread edited by its author: queued as the reply in its new words, which the job gets
 * if it does not have the reply yet (see steerJob.ts). Slack's own changes (a link preview added)
 * carry no `edited`; an edit of a reply that mentions the bot comes again as a mention, whose it is.
 */
async function editedReply(
  ctx: ListenerContext,
  event: { channel: string; channel_type?: string; message?: unknown },
  eventId: string,
  context: MessageArgs['context'],
): Promise<void> {
  const changed = authorEdit(event);
  if (!changed) return;
  const { ts, thread_ts: threadTs, user, text } = changed;
  if (!threadTs || threadTs === ts) return; // a top-level message
  const mentionsBot = context.botUserId !== undefined && text.includes(`<@${context.botUserId}`);
  if (mentionsBot) return;
  const parentUser = threadParentUser(changed);
  const place = {
    channel: event.channel,
    threadTs,
    ts,
    user,
    parentIsBot: parentUser !== undefined && parentUser === context.botUserId,
  };
  // An edit lost is not worth a word: its reply had its answer.
  await ctx.enqueue({ ...replyRequest(place, text, changed), editedTs: changed.edited.ts }, eventId, {
    ifLost: { lastDelivery: lastDelivery(context) },
  });
}

/** A reply (as written, or edited) as the worker's request: its words, the names of its files, a message forwarded with it. */
function replyRequest(
  place: ThreadReplyRequest['place'],
  text: string,
  message: {
    files?: Array<{ name?: string | null; title?: string | null }> | undefined;
    attachments?: unknown;
  },
): ThreadReplyRequest {
  // Files are named for the job, as from a mention (their names only: the agent cannot open them).
  const files = Array.isArray(message.files) ? message.files.map(({ name, title }) => ({ name, title })) : [];
  // A message forwarded with it, as from a mention (kept to what a prompt quotes of a message).
  const forwarded = forwardedText(message.attachments).slice(0, 4_000);
  return {
    kind: 'thread_reply',
    place,
    text,
    ...(files.length > 0 ? { files } : {}),
    ...(forwarded ? { forwarded } : {}),
  };
}

export function registerThreadReply(app: App, ctx: ListenerContext): void {
  app.event('message', threadReply(ctx));
}
