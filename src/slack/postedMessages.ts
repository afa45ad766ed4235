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
  slack: Pick<webApi.WebClient, 'conversations'>,
  where: Whereabouts,
  mark: MessageMark,
  botId: string,
): Promise<PostedMessage | undefined> {
  const oldest = toSlackTs(where.since.getTime() - CLOCK_MARGIN_MS);
  if (where.threadTs !== null) {
    try {
      const found = await search(
        (cursor) =>
          slack.conversations.replies({
            channel: where.channel,
            ts: where.threadTs as string,
            oldest,
            include_all_metadata: true,
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          }),
        mark,
        botId,
      );
      if (found) return found;
    } catch (error) {
      if (slackErrorCode(error) !== 'thread_not_found') throw error;
    }
  }
  return search(
    (cursor) =>
      slack.conversations.history({
        channel: where.channel,
        oldest,
        include_all_metadata: true,
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      }),
    mark,
    botId,
  );
}

async function search(
  read: (
    cursor: string | undefined,
  ) => Promise<{ messages?: unknown[]; has_more?: boolean; response_metadata?: { next_cursor?: string } }>,
  mark: MessageMark,
  botId: string,
): Promise<PostedMessage | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await read(cursor);
    for (const message of (answer.messages ?? []) as MessageWithMetadata[]) {
      if (message.ts && message.bot_id === botId && carries(message, mark))
        return { ts: message.ts, threadTs: message.thread_ts };
    }
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (!answer.has_more || !cursor) return undefined;
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
