import { followedHereText } from './doorAnswers.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { postJobCard } from './postJobCard.js';

/**
 * A job whose card could not be posted where it was asked for (the bot is not in that channel)
 * moves to the requester's DM with the bot: the card is posted there, its thread becomes the
 * job's thread, and the follower reports there. Returns the moved record, or undefined when Slack
 * would not take the DM either (the job is still followed, without a thread).
 */
export async function followInDm(ctx: JobsContext, record: JobRecord): Promise<JobRecord | undefined> {
  const wanted = record.channel;
  try {
    // Posting to a user id lands in the app's DM with that person (chat:write is enough).
    const posted = await postJobCard(ctx, record, { channel: record.requestedBy });
    if (posted.kind !== 'posted') throw posted.error;
    const place = { channel: posted.channel, threadTs: posted.ts, cardTs: posted.ts, pendingCard: undefined };
    // Read again: the follower may have saved news of the job since it was created.
    const moved = (await ctx.records.update(record.jobId, (current) => ({ ...current, ...place }))) ?? {
      ...record,
      ...place,
    };
    await ctx.slack.chat
      .postMessage({ channel: place.channel, thread_ts: place.threadTs, text: followedHereText(wanted) })
      .catch((error: unknown) =>
        ctx.logger.warn(`could not explain the DM card of ${record.jobId}: ${String(error)}`),
      );
    ctx.logger.info(`job ${record.jobId} is followed in ${record.requestedBy}'s DM instead of ${wanted}`);
    return moved;
  } catch (error) {
    ctx.logger.warn(`job ${record.jobId}: could not post its card in the DM either: ${String(error)}`);
    return undefined;
  }
}
