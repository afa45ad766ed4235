import type { webApi } from '@slack/bolt';
import { messageText } from './messageText.js';

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
/**
 * A message's text kept when read: past what a prompt quotes of it (3,000 characters). A thread of
 * long messages read whole (with their blocks) would hold tens of megabytes per read.
 */
const TEXT_KEPT = 4_000;
const FILES_KEPT = 20;

/** As Slack answers a message: with the blocks and attachments an app's words may be in. */
type SlackMessage = ThreadMessage & { blocks?: unknown; attachments?: unknown };

/**
 * The fields the bot reads of a message, its text (an app's from its blocks or attachments) cut to
 * `textKept`: what a read keeps of each.
 */
function slim(message: SlackMessage, textKept = TEXT_KEPT): ThreadMessage {
  const kept: ThreadMessage = { ts: message.ts };
  if (message.user !== undefined) kept.user = message.user;
  if (message.bot_id !== undefined) kept.bot_id = message.bot_id;
  if (message.subtype !== undefined) kept.subtype = message.subtype;
  const text = messageText(message);
  if (message.text !== undefined || text !== '') kept.text = text.slice(0, textKept);
  if (message.username !== undefined) kept.username = message.username;
  if (message.bot_profile?.name !== undefined) kept.bot_profile = { name: message.bot_profile.name };
  if (message.files !== undefined) {
    kept.files = message.files
      .slice(0, FILES_KEPT)
      .map((file) => ({ name: file.name ?? null, title: file.title ?? null }));
  }
  return kept;
}
/** The most messages kept (after the parent): the newest, which matter most to the request. */
const KEEP = 1_000;
/** A thread longer than this many pages is read only this far. */
const MAX_PAGES = 25;
/** The most messages of a thread the bot reads (its parent among them). */
export const THREAD_REPLIES_READ = MAX_PAGES * PAGE_SIZE;

/** A message of a channel's own timeline (with its metadata), read alone; undefined when Slack has none. */
export async function readChannelMessage(
  slack: Pick<webApi.WebClient, 'conversations'>,
  channel: string,
  ts: string,
) {
  const read = await slack.conversations.history({
    channel,
    latest: ts,
    inclusive: true,
    limit: 1,
    include_all_metadata: true,
  });
  const message = read.messages?.[0];
  return message?.ts === ts ? message : undefined;
}

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
  const found = ((answer.messages ?? []) as SlackMessage[]).find((message) => message.ts === ts);
  // One message, whole: the shortcut quotes the message it was chosen on in full.
  return found && slim(found, Number.POSITIVE_INFINITY);
}

/**
 * What of a thread was not read: nothing; older replies, left out for the newest; or, past what the
 * bot reads (Slack gives a thread oldest first), its newest replies.
 */
export type ThreadCut = 'none' | 'older' | 'newest';

/** The messages of the thread rooted at `threadTs`, parent first, then the newest replies, oldest to newest. */
export async function readThread(
  slack: webApi.WebClient,
  channel: string,
  threadTs: string,
): Promise<{ messages: ThreadMessage[]; cut: ThreadCut }> {
  const messages: ThreadMessage[] = [];
  let dropped = false;
  let pages = 0;
  const replies = slack.paginate('conversations.replies', { channel, ts: threadTs, limit: PAGE_SIZE });
  for await (const page of replies as AsyncIterable<webApi.ConversationsRepliesResponse>) {
    // The parent once: it is said to come again at the top of later pages.
    const read = ((page.messages ?? []) as SlackMessage[]).filter(
      (message) => pages === 0 || message.ts !== threadTs,
    );
    messages.push(...read.map((message) => slim(message)));
    if (messages.length > KEEP + 1) {
      messages.splice(1, messages.length - KEEP - 1); // the parent stays first
      dropped = true;
    }
    pages += 1;
    if (pages === MAX_PAGES && page.response_metadata?.next_cursor) return { messages, cut: 'newest' };
  }
  return { messages, cut: dropped ? 'older' : 'none' };
}

/** Slack timestamps are "seconds.micros": compared as two integers, never as floats. */
export function tsBefore(a: string, b: string): boolean {
  const [aSec = 0, aMicro = 0] = a.split('.').map(Number);
  const [bSec = 0, bMicro = 0] = b.split('.').map(Number);
  return aSec < bSec || (aSec === bSec && aMicro < bMicro);
}
