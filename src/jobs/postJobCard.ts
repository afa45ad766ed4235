import { JOB_CARD_MARK_TYPE, type MessageMark, postMarked } from '../slack/postedMessages.js';
import { isPassingSlackFailure, slackErrorCode } from '../slack/slackErrors.js';
import { jobCard } from './jobCard.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';

/**
 * Posting a job's card. The card carries the job's id as message metadata, so a card whose post
 * landed but was never recorded (the bot crashed, the store was away) can be found again
 * (`recoverJobCard`) rather than posted twice.
 */

export type CardPost =
  | { kind: 'posted'; channel: string; ts: string }
  /** Slack was busy or out of reach: ask again later (the card is looked for first). */
  | { kind: 'later'; error: unknown }
  /** Slack refused for good: the bot is not in the channel, the channel is gone, a scope is missing. */
  | { kind: 'refused'; error: unknown };

export const cardMark = (jobId: string): MessageMark => ({
  event_type: JOB_CARD_MARK_TYPE,
  event_payload: { job_id: jobId },
});

/**
 * Posts the card in `channel` (under `threadTs` when given). In a channel it is sent once: a card
 * whose post failed is looked for by its mark (`recoverJobCard`) before it is posted again. In the
 * person's DM (`inDm`) it is never looked for (see `moveToDm`): there the client's retries stand.
 */
export async function postJobCard(
  ctx: JobsContext,
  record: JobRecord,
  where: { channel: string; threadTs?: string | null | undefined; inDm?: boolean },
): Promise<CardPost> {
  // Drawn for where it goes: a card moved to the person's DM (posted to their user id) is a DM's.
  const card = jobCard({ ...record, channel: where.channel });
  const post = (blocks: typeof card.blocks | undefined) => {
    const message = {
      channel: where.channel,
      ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
      text: card.text,
      ...(blocks ? { blocks } : {}),
      metadata: cardMark(record.jobId),
      unfurl_links: false,
      unfurl_media: false,
    };
    return where.inDm ? ctx.slack.chat.postMessage(message) : postMarked(ctx.slackOnce, message);
  };
  try {
    let posted: Awaited<ReturnType<typeof post>>;
    try {
      posted = await post(card.blocks);
    } catch (error) {
      if (slackErrorCode(error) !== 'invalid_blocks') throw error;
      // Our bug, not the person's: the card still goes out, as its plain-text fallback.
      ctx.logger.error(
        `Slack refused the blocks of job ${record.jobId}'s card; posting it as text: ${String(error)}`,
      );
      posted = await post(undefined);
    }
    if (!posted.ts) throw new Error('Slack answered a posted card without its ts');
    return { kind: 'posted', channel: posted.channel ?? where.channel, ts: posted.ts };
  } catch (error) {
    return isPassingSlackFailure(error) ? { kind: 'later', error } : { kind: 'refused', error };
  }
}

/** Records where the card is; its thread now belongs to the job. */
export async function placeCard(
  ctx: JobsContext,
  record: JobRecord,
  card: { channel: string; ts: string },
  threadTs: string | null | undefined,
): Promise<JobRecord> {
  const place = { cardTs: card.ts, threadTs: threadTs ?? card.ts, pendingCard: undefined };
  // Merged into the stored record: the follower may have saved a newer status meanwhile.
  const placed = (await ctx.records.update(record.jobId, (current) => ({ ...current, ...place }))) ?? {
    ...record,
    ...place,
  };
  ctx.onJobChanged?.(placed); // the requester's Home tab lists it
  return placed;
}
