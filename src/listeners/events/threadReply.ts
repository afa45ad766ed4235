import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { budgetNote } from '../../jobs/jobAnswers.js';
import { steerJob } from '../../jobs/steerJob.js';
import type { ListenerContext } from '../context.js';

const DELIVERED = 'white_check_mark';

type MessageArgs = SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs;

/** A reply in a job's thread steers the job. Everything else in channels is none of our business. */
export function registerThreadReply(app: App, ctx: ListenerContext): void {
  app.event('message', async ({ event, client, logger }: MessageArgs) => {
    if (event.subtype !== undefined) return; // edits, deletions, joins, bot posts...
    if ('bot_id' in event && event.bot_id) return;
    if (!event.thread_ts || event.thread_ts === event.ts) return; // top-level message
    if (!event.user || typeof event.text !== 'string') return;
    const { channel, ts, thread_ts: threadTs, user, text } = event;

    await ctx.inFlight.run(async () => {
      try {
        const outcome = await steerJob(ctx.jobs, ctx.userNames, {
          channel,
          threadTs,
          messageTs: ts,
          user,
          text,
        });
        if (outcome.kind === 'sent') {
          await client.reactions.add({ channel, timestamp: ts, name: DELIVERED }).catch((error) => {
            logger.warn(`could not mark a follow-up as delivered: ${String(error)}`);
          });
          const note = outcome.budget && budgetNote(outcome.budget);
          if (note) await client.chat.postEphemeral({ channel, user, thread_ts: threadTs, text: note });
        } else if (outcome.kind === 'failed' || outcome.kind === 'refused') {
          await client.chat.postEphemeral({ channel, user, thread_ts: threadTs, text: outcome.text });
        }
      } catch (error) {
        // Most likely the store is away. We cannot tell whether this thread is a job's, so we
        // stay quiet in the channel rather than answer every thread reply with an error.
        logger.error(`a thread reply could not be handled: ${String(error)}`);
      }
    });
  });
}
