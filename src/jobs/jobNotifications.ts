import { classifySlackError, slackErrorCode } from '../slack/slackErrors.js';
import { tryLease } from '../store/lease.js';
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

// Longer than one Slack post with all of the WebClient's retries (about half a minute), so another
// instance cannot post the same notice while the holder is still trying; short enough that a
// holder that crashed mid-post delays the notice by a minute at most.
const NOTICE_LEASE_MS = 60_000;

export const noticeKey = (round: number, what: string) => `${round}:${what}`;

/** Redraws the job card from the record. */
export async function editJobCard(ctx: JobsContext, record: JobRecord): Promise<SlackDelivery> {
  if (!record.cardTs) return 'done';
  const card = jobCard(record, ctx.now());
  try {
    await ctx.slack.chat.update({
      channel: record.channel,
      ts: record.cardTs,
      text: card.text,
      blocks: card.blocks,
    });
    return 'done';
  } catch (error) {
    return refusal(ctx, record, 'update the card of', error);
  }
}

/**
 * Posts `notice` in the job's thread unless it was posted already. The lease keeps two instances
 * (or two checks) from posting at the same moment; the record, re-read inside the lease, says
 * whether anyone posted it before. `announced` is written right after the post, so a duplicate
 * needs a crash between those two lines. A post that fails for a passing reason leaves the
 * notice unannounced: the next check tries again, so a final notice is never dropped.
 */
export async function announceOnce(ctx: JobsContext, jobId: string, notice: Notice): Promise<NoticeOutcome> {
  const lease = await tryLease(ctx.store.atomic, `notice:${jobId}:${notice.key}`, NOTICE_LEASE_MS);
  if (!lease) return 'busy';
  try {
    const record = await ctx.records.get(jobId);
    // A follow-up reopened the job meanwhile: news of the earlier round would only confuse.
    if (!record || record.threadTs === null || record.round !== notice.round) return 'stale';
    if (record.announced.includes(notice.key)) return 'already_told';
    const delivery = await postNews(ctx, record, record.threadTs, notice.text);
    if (delivery === 'channel_gone') return 'channel_gone';
    if (delivery !== 'done') return 'retry';
    await ctx.records.update(jobId, (current) =>
      current.announced.includes(notice.key)
        ? current
        : { ...current, announced: [...current.announced, notice.key] },
    );
    return 'posted';
  } finally {
    await lease.release().catch(() => {}); // it expires on its own if the store is away now
  }
}

/** In the thread; as a message of its own when the thread is gone. */
async function postNews(
  ctx: JobsContext,
  record: JobRecord,
  threadTs: string,
  text: string,
): Promise<SlackDelivery> {
  const message = {
    channel: record.channel,
    unfurl_links: false,
    unfurl_media: false,
  } as const;
  try {
    await ctx.slack.chat.postMessage({ ...message, thread_ts: threadTs, text });
    return 'done';
  } catch (error) {
    const code = slackErrorCode(error);
    if (code !== 'thread_not_found' && classifySlackError(error) !== 'message_gone') {
      return refusal(ctx, record, 'post news of', error);
    }
  }
  try {
    await ctx.slack.chat.postMessage({
      ...message,
      text: strayJobNewsText(record, text),
    });
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
    default:
      // Rate limits were already retried by the WebClient; anything left is worth another try later.
      ctx.logger.warn(`could not ${what} job ${record.jobId} in ${record.channel}: ${String(error)}`);
      return 'retry';
  }
}
