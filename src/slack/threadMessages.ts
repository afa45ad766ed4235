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
/** The most messages kept (after the parent): the newest, which matter most to the request. */
const KEEP = 1_000;
/** A thread longer than this many pages is read only this far. */
const MAX_PAGES = 25;
/** The most messages of a thread the bot reads (its parent among them). */
export const THREAD_REPLIES_READ = MAX_PAGES * PAGE_SIZE;

/**
 * One message of the thread rooted at `threadTs` (the root itself, or a reply), read alone: one
 * request, however long the thread. Undefined when Slack has no such message.
 */
export async function readThreadMessage(
  slack: webApi.WebClient,
  channel: string,
  threadTs: string,
  ts: string,
): Promise<ThreadMessage | undefined> {
  // Slack answers the thread's parent first, whatever the window, then the replies within it.
  const answer = await slack.conversations.replies({
    channel,
    ts: threadTs,
    oldest: ts,
    latest: ts,
    inclusive: true,
    limit: 2,
  });
  return ((answer.messages ?? []) as ThreadMessage[]).find((message) => message.ts === ts);
}

/**
 * The messages of the thread rooted at `threadTs`, parent first, then the newest replies, oldest to
 * newest. `truncated` is true when older replies were left out, or the thread was longer than the
 * bot reads; `endUnread`, in that last case (Slack gives a thread oldest first: its newest replies
 * were not read).
 */
export async function readThread(
  slack: webApi.WebClient,
  channel: string,
  threadTs: string,
): Promise<{ messages: ThreadMessage[]; truncated: boolean; endUnread: boolean }> {
  const messages: ThreadMessage[] = [];
  let cursor: string | undefined;
  let dropped = false;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await slack.conversations.replies({
      channel,
      ts: threadTs,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    messages.push(...((answer.messages ?? []) as ThreadMessage[]));
    if (messages.length > KEEP + 1) {
      messages.splice(1, messages.length - KEEP - 1); // the parent stays first
      dropped = true;
    }
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (!answer.has_more || !cursor) return { messages, truncated: dropped, endUnread: false };
  }
  return { messages, truncated: true, endUnread: true };
}
