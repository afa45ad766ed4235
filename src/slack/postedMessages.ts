import { setTimeout as sleepFor } from 'node:timers/promises';
import type { webApi } from '@slack/bolt';
import { slackErrorCode } from './slackErrors.js';

/**
 * Finding a message the bot posted, by the metadata it was posted with. A post whose answer was
 * lost (the bot crashed, Redis was away when the answer came) is found this way after a restart,
 * so it is not posted twice.
 */

/** Slack message metadata: what the bot attaches to a message it may have to find again. */
export interface MessageMark {
  event_type: string;
  event_payload: Record<string, string>;
}

/** The metadata event type every job card carries. */
export const JOB_CARD_MARK_TYPE = 'docs_agent_job';

/**
 * The options of the client that posts marked messages: each call is sent once. The client's usual
 * retries send a post again after an HTTP 5xx or a cut connection, yet Slack may have stored it all
 * the same, and the channel would show it twice. The caller's next try looks for the mark instead.
 * A 429 is handed back rather than waited out inside the client: `postMarked` waits and posts again.
 */
export const SENT_ONCE = {
  retryConfig: { retries: 0 },
  rejectRateLimitedCalls: true,
} satisfies webApi.WebClientOptions;

// As many as the bot's other Slack calls get (SLACK_RETRIES in app.ts).
const RATE_LIMITED_TRIES = 5;

/**
 * Posts a marked message on a client built with `SENT_ONCE`. A 429 means Slack took nothing: it is
 * waited out for its Retry-After and the post is sent again, a few times. Any other failure is
 * thrown, the post perhaps made: the caller looks for its mark (`findPostedMessage`) before posting
 * it again.
 */
export async function postMarked(
  slack: Pick<webApi.WebClient, 'chat'>,
  message: Parameters<webApi.WebClient['chat']['postMessage']>[0] & { metadata: MessageMark },
): Promise<webApi.ChatPostMessageResponse> {
  for (let tries = 1; ; tries += 1) {
    try {
      return await slack.chat.postMessage(message);
    } catch (error) {
      const retryAfter = (error as { code?: unknown; retryAfter?: unknown }).retryAfter;
      const rateLimited = (error as { code?: unknown }).code === 'slack_webapi_rate_limited_error';
      if (!rateLimited || typeof retryAfter !== 'number' || tries === RATE_LIMITED_TRIES) throw error;
      await sleepFor(retryAfter * 1000);
    }
  }
}

export interface PostedMessage {
  ts: string;
  /** Set when the message is a reply in a thread. */
  threadTs: string | undefined;
}

/** Where to look: the thread when the message was meant for one, else the channel's own timeline. */
export interface Whereabouts {
  channel: string;
  threadTs: string | null;
  /** When the post was begun: the channel is read back to a little before it. */
  since: Date;
}

interface MessageWithMetadata {
  ts?: string;
  bot_id?: string;
  thread_ts?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

// Slack's clock and ours may differ; a few minutes earlier than `since` costs only a longer read.
const CLOCK_MARGIN_MS = 10 * 60_000;
const PAGE_SIZE = 200;
const MAX_PAGES = 5;

/**
 * The message the bot (`botId`) posted carrying `mark`, or undefined when it is not there. Another
 * app's message with the same metadata is not taken for it. A post meant for a thread is
 * looked for in that thread, then (the thread may be gone, and the news posted on its own) in the
 * channel. Throws what Slack answered when it would not let the bot read.
 */
export async function findPostedMessage(
  slack: Pick<webApi.WebClient, 'paginate'>,
  where: Whereabouts,
  mark: MessageMark,
  botId: string,
): Promise<PostedMessage | undefined> {
  const oldest = toSlackTs(where.since.getTime() - CLOCK_MARGIN_MS);
  if (where.threadTs !== null) {
    try {
      const replies = { channel: where.channel, ts: where.threadTs, oldest };
      const found = await search(slack, 'conversations.replies', replies, mark, botId);
      if (found) return found;
    } catch (error) {
      if (slackErrorCode(error) !== 'thread_not_found') throw error;
    }
  }
  return search(slack, 'conversations.history', { channel: where.channel, oldest }, mark, botId);
}

async function search(
  slack: Pick<webApi.WebClient, 'paginate'>,
  method: 'conversations.replies' | 'conversations.history',
  options: Record<string, string>,
  mark: MessageMark,
  botId: string,
): Promise<PostedMessage | undefined> {
  let pages = 0;
  const read = slack.paginate(method, { ...options, include_all_metadata: true, limit: PAGE_SIZE });
  for await (const page of read as AsyncIterable<{ messages?: unknown[] }>) {
    for (const message of (page.messages ?? []) as MessageWithMetadata[]) {
      if (message.ts && message.bot_id === botId && carries(message, mark))
        return { ts: message.ts, threadTs: message.thread_ts };
    }
    pages += 1;
    if (pages === MAX_PAGES) break;
  }
  return undefined;
}

function carries(message: MessageWithMetadata, mark: MessageMark): boolean {
  const { metadata } = message;
  if (metadata?.event_type !== mark.event_type) return false;
  return Object.entries(mark.event_payload).every(([key, value]) => metadata.event_payload?.[key] === value);
}

function toSlackTs(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(6);
}
