import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { type SteerJobOutcome, steerJob } from '../../jobs/steerJob.js';
import { withoutBotMention } from '../../slack/botMention.js';
import type { ListenerContext } from '../context.js';
import { answerFollowUp } from './answerFollowUp.js';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/** A reply in a job's thread steers the job. Everything else in channels is none of our business. */
export function registerThreadReply(app: App, ctx: ListenerContext): void {
  app.event('message', async ({ event, client, context, logger }: MessageArgs) => {
    // A reply with a file, or also sent to the channel, is still a reply; edits, deletions, joins are not.
    if (event.subtype !== undefined && event.subtype !== 'file_share' && event.subtype !== 'thread_broadcast')
      return;
    if ('bot_id' in event && event.bot_id) return;
    if (!event.thread_ts || event.thread_ts === event.ts) return; // top-level message
    if (!event.user || typeof event.text !== 'string') return;
    const { channel, ts, thread_ts: threadTs, user } = event;
    // A reply that mentions the bot also arrives as app_mention: both give the job the same words.
    const text = withoutBotMention(event.text, context.botUserId);

    let outcome: SteerJobOutcome;
    try {
      outcome = await steerJob(ctx.jobs, ctx.userNames, { channel, threadTs, messageTs: ts, user, text });
    } catch (error) {
      // Most likely the store is away. We cannot tell whether this thread is a job's, so we
      // stay quiet in the channel rather than answer every thread reply with an error.
      logger.error(`a thread reply could not be handled: ${String(error)}`);
      return;
    }
    await answerFollowUp(client, logger, { channel, threadTs, ts, user }, outcome).catch((error: unknown) => {
      logger.warn(`could not answer a thread reply in ${channel}: ${String(error)}`);
    });
  });
}
