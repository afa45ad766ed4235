import { findPostedMessage, type MessageMark, postMarked } from '../slack/postedMessages.js';
import { classifySlackError, slackErrorCode, threadTakesNoReply } from '../slack/slackErrors.js';
import { RENEWED_LEASE_MS, withRenewedLease } from '../store/lease.js';
import { jobCard } from './jobCard.js';
import { strayJobNewsText } from './jobNews.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';

/**
 * Telling Slack about a job while following it: editing its card (idempotent, so a duplicate from a
 * second instance is harmless) and posting news in its thread (not idempotent, so each notice is
 * posted at most once per job and round, across restarts and instances).
 */

/** How Slack took a message about a job. */
export type SlackDelivery =
  | 'done'
  /** The card was deleted. */
  | 'card_gone'
  /** The channel is archived or deleted, or the bot was removed from it: stop telling Slack. */
  | 'channel_gone'
  /** Rate limited past the WebClient's own retries, a Slack outage, a network error: try at the next check. */
  | 'retry';

export interface Notice {
  /** Recorded in `JobRecord.announced` once posted, e.g. `2:completed`. */
  key: string;
  round: number;
  text: string;
}

export type NoticeOutcome = 'posted' | 'already_told' | 'stale' | 'busy' | 'channel_gone' | 'retry';

// Renewed while the holder posts (Slack's retries, and a 429's Retry-After, can take a while), so another instance
// never posts the same notice meanwhile; a holder that crashed mid-post delays it a few seconds.
const NOTICE_LEASE_MS = RENEWED_LEASE_MS;

export const noticeKey = (round: number, what: string) => `${round}:${what}`;

const noticeMark = (jobId: string, key: string): MessageMark => ({
  event_type: 'docs_agent_job_news',
  event_payload: { job_id: jobId, notice: key },
});

/** Redraws the job card from the record. */
export async function editJobCard(ctx: JobsContext, record: JobRecord): Promise<SlackDelivery> {
  if (!record.cardTs) return 'done';
  const card = jobCard(record);
  const update = (blocks: typeof card.blocks) =>
    ctx.slack.chat.update({ channel: record.channel, ts: record.cardTs as string, text: card.text, blocks });
  try {
    try {
      await update(card.blocks);
    } catch (error) {
      if (slackErrorCode(error) !== 'invalid_blocks') throw error;
      // Our bug, not the person's: the card still shows where the job stands, as plain text.
      ctx.logger.error(
        `Slack refused the blocks of job ${record.jobId}'s card; showing it as text: ${String(error)}`,
      );
      await update([]);
    }
    return 'done';
  } catch (error) {
    return refusal(ctx, record, 'update the card of', error);
  }
}

/**
 * Posts `notice` in the job's thread unless it was posted already. The lease keeps two instances
 * (or two checks) from posting at the same moment; the record, re-read inside the lease, says
 * whether anyone posted it before. The record notes the post before it is made, and the post
 * carries the notice as message metadata: when the bot crashed (or lost the store) between the
 * post and the record, the next try finds the notice in the thread instead of posting it twice.
 * A post that fails for a passing reason leaves the notice unannounced: the next check tries
 * again, so a final notice is never dropped.
 */
export async function announceOnce(ctx: JobsContext, jobId: string, notice: Notice): Promise<NoticeOutcome> {
  const held = await withRenewedLease(
    ctx.store.atomic,
    `notice:${jobId}:${notice.key}`,
    NOTICE_LEASE_MS,
    async (lost): Promise<NoticeOutcome> => {
      const record = await ctx.records.get(jobId);
      // A follow-up reopened the job meanwhile: news of the earlier round would only confuse.
      if (!record || record.threadTs === null || record.round !== notice.round) return 'stale';
      if (record.announced.includes(notice.key)) return 'already_told';
      const mark = noticeMark(jobId, notice.key);

      const begun = record.noticesInFlight?.[notice.key];
      if (begun !== undefined) {
        const where = { channel: record.channel, threadTs: record.threadTs, since: new Date(begun) };
        let found: Awaited<ReturnType<typeof findPostedMessage>>;
        try {
          found = await findPostedMessage(ctx.slack, where, mark, ctx.botId);
        } catch (error) {
          const outcome = refusal(ctx, record, `look for notice ${notice.key} of`, error);
          return outcome === 'channel_gone' ? 'channel_gone' : 'retry';
        }
        if (found) {
          ctx.logger.info(
            `job ${jobId}: notice ${notice.key} was posted before a restart; not posting it again`,
          );
          await markAnnounced(ctx, jobId, notice.key);
          return 'posted';
        }
      } else {
        const since = ctx.now().toISOString();
        await ctx.records.update(jobId, (current) => ({
          ...current,
          noticesInFlight: { ...current.noticesInFlight, [notice.key]: since },
        }));
      }

      // Our lease lapsed meanwhile (a stall, Redis away): another check may be posting the notice
      // now. 'busy', and the next check finds it on the record or in the thread.
      lost.throwIfAborted();
      const delivery = await postNews(ctx, record, record.threadTs, notice.text, mark);
      if (delivery === 'channel_gone') return 'channel_gone';
      if (delivery !== 'done') return 'retry';
      await markAnnounced(ctx, jobId, notice.key);
      return 'posted';
    },
    { logger: ctx.logger },
  );
  return held.ran ? held.value : 'busy';
}

async function markAnnounced(ctx: JobsContext, jobId: string, key: string): Promise<void> {
  await ctx.records.update(jobId, (current) => {
    const { [key]: _done, ...inFlight } = current.noticesInFlight ?? {};
    return {
      ...current,
      announced: current.announced.includes(key) ? current.announced : [...current.announced, key],
      noticesInFlight: Object.keys(inFlight).length > 0 ? inFlight : undefined,
    };
  });
}

/** In the thread; as a message of its own when the thread is gone. */
async function postNews(
  ctx: JobsContext,
  record: JobRecord,
  threadTs: string,
  text: string,
  metadata: MessageMark,
): Promise<SlackDelivery> {
  const message = {
    channel: record.channel,
    metadata,
    unfurl_links: false,
    unfurl_media: false,
  } as const;
  // Sent once: a notice whose post failed is looked for by its mark before it is posted again.
  try {
    await postMarked(ctx.slackOnce, { ...message, thread_ts: threadTs, text });
    return 'done';
  } catch (error) {
    if (!threadTakesNoReply(error)) {
      return refusal(ctx, record, 'post news of', error);
    }
  }
  try {
    await postMarked(ctx.slackOnce, { ...message, text: strayJobNewsText(record, text) });
    return 'done';
  } catch (error) {
    return refusal(ctx, record, 'post news of', error);
  }
}

function refusal(ctx: JobsContext, record: JobRecord, what: string, error: unknown): SlackDelivery {
  switch (classifySlackError(error)) {
    case 'message_gone':
      return 'card_gone';
    case 'channel_gone':
    case 'not_in_channel':
      return 'channel_gone';
    case 'auth':
      // The token refused: said once for every call (SlackTokenState), not per job at every check.
      return 'retry';
    default:
      // Rate limits were already waited out; anything left is worth another try later.
      ctx.logger.warn(`could not ${what} job ${record.jobId} in ${record.channel}: ${String(error)}`);
      return 'retry';
  }
}
