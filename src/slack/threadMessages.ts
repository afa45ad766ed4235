import type { webApi } from '@slack/bolt';

/** A message of a thread, as `conversations.replies` gives it (the fields the bot reads). */
export interface ThreadMessage {
  ts: string;
  user?: string;
  bot_id?: string;
  subtype?: string;
  text?: string;
  username?: string;
  bot_profile?: { name?: string };
  files?: Array<{ name?: string | null; title?: string | null }>;
}

const PAGE_SIZE = 200;
/** A thread longer than this is read only this far: enough for any context we would keep. */
const MAX_PAGES = 5;

/**
 * The messages of the thread rooted at `threadTs`, parent first, oldest to newest.
 * `truncated` is true when the thread was longer than the bot reads.
 */
export async function readThread(
  slack: webApi.WebClient,
  channel: string,
  threadTs: string,
): Promise<{ messages: ThreadMessage[]; truncated: boolean }> {
  const messages: ThreadMessage[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await slack.conversations.replies({
      channel,
      ts: threadTs,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    messages.push(...((answer.messages ?? []) as ThreadMessage[]));
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (!answer.has_more || !cursor) return { messages, truncated: false };
  }
  return { messages, truncated: true };
}
