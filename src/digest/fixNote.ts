import { createHash } from 'node:crypto';
import type { Logger, types, webApi } from '@slack/bolt';
import type { BotIdentity } from '../jobs/threadContext.js';
import type { UserNames } from '../slack/plainText.js';
import { readChannelMessage } from '../slack/threadMessages.js';
import type { AtomicOps } from '../store/atomic.js';
import { readIndexMember } from '../store/indexMember.js';
import { FIX_WITH_AGENT_ACTION, parseStruggleValue, type StruggleValue } from './strugglesMessage.js';

/** The parts of a posted digest block this reads. */
interface PostedBlock {
  type: string;
  text?: { type: string; text: string };
  accessory?: { action_id?: string; value?: string };
}

const FIX_NOTE = '🛠 ';
const SECTION_TEXT_MAX = 3_000;
const FIX_NOTE_END = ' started a job for this';

/** Who an item of a posted digest says started a job for it (its text, as `noteFixOnDigest` left it). */
export function fixesNoted(itemText: string): string[] {
  const names = itemText
    .split('\n')
    .filter((line) => line.startsWith(FIX_NOTE) && line.endsWith(FIX_NOTE_END))
    .map((line) => line.slice(FIX_NOTE.length, -FIX_NOTE_END.length));
  return [...new Set(names)];
}

/**
 * A job started from a digest's "Fix with the docs agent": the item says so on the digest itself,
 * for everyone who reads it, so that the next person sees it is being fixed before starting a
 * second job for it. Best effort: the job stands whatever Slack answers. Read and written back
 * whole: one note at a time on a digest (the caller holds it). True when the item names the person now.
 */
export async function noteFixOnDigest(
  client: webApi.WebClient,
  logger: Pick<Logger, 'warn'>,
  parts: { userNames: UserNames; bot: BotIdentity },
  digest: { channel: string; ts: string; struggle: StruggleValue },
  user: string,
): Promise<boolean> {
  try {
    const posted = await readChannelMessage(client, digest.channel, digest.ts);
    // Only the bot's own digest: anyone may post a message with buttons of the same action id.
    if (!posted || !parts.bot.botId || posted.bot_id !== parts.bot.botId) return false;
    const wanted = JSON.stringify(digest.struggle);
    const known = await parts.userNames(user).catch(() => undefined);
    const name = known ?? 'Someone';
    let found = false;
    let named = false;
    const blocks = ((posted.blocks ?? []) as PostedBlock[]).map((block) => {
      if (found || block.type !== 'section' || block.accessory?.action_id !== FIX_WITH_AGENT_ACTION)
        return block;
      if (
        block.text?.type !== 'plain_text' ||
        JSON.stringify(parseStruggleValue(block.accessory.value)) !== wanted
      ) {
        return block;
      }
      found = true;
      // Said once per person (by name: whoever Slack would not name is noted each time).
      if (known !== undefined && fixesNoted(block.text.text).includes(name)) {
        named = true;
        return block;
      }
      // Plain text, as the item's line is (a name is a person's own words).
      const text = `${block.text.text}\n${FIX_NOTE}${name}${FIX_NOTE_END}`;
      // Slack's 3,000 characters reached after many fixes: the item and its notes stay as they are.
      if (text.length > SECTION_TEXT_MAX) return block;
      named = true;
      return { ...block, text: { ...block.text, text } };
    });
    if (!found || JSON.stringify(blocks) === JSON.stringify(posted.blocks ?? [])) return named;
    await client.chat.update({
      channel: digest.channel,
      ts: digest.ts,
      text: posted.text ?? '',
      blocks: blocks as types.KnownBlock[],
      // Its mark (the digest's period) stays with it.
      ...(posted.metadata ? { metadata: posted.metadata as types.MessageMetadata } : {}),
    });
    return true;
  } catch (error) {
    logger.warn(`could not note on the digest in ${digest.channel} that a fix started: ${String(error)}`);
    return false;
  }
}

/** An item of a posted digest: the digest's message, and the item as its button carries it. */
export interface DigestItem {
  channel: string;
  ts: string;
  struggle: StruggleValue;
}

/**
 * How long a job being started from a digest's item warns the next person who clicks it, at most:
 * a start takes seconds (Mintlify's create, then the card), and its note on the digest says it from then on.
 */
const STARTING_MS = 10 * 60_000;

const startingKey = (item: DigestItem) =>
  `fix-starting:${item.channel}:${item.ts}:${createHash('sha256')
    .update(JSON.stringify(item.struggle))
    .digest('hex')
    .slice(0, 32)}`;

interface StartingMark {
  /** The start (its request's queue job): each run of that request finds this mark again. */
  start: string;
  user: string;
  name: string;
  at: number;
}

/**
 * A form for the item was submitted: its job is being started. Until its note is on the digest
 * (`noteFixOnDigest`), the next person to click the item is told by this (see `fixesStarting`),
 * in whichever process opens their form. Resolves with the mark, for `dropFixStarting`: the same
 * one for every run of the start's request (run again after Redis failed), so that dropping it
 * leaves no other mark of that start warning for its 10 minutes.
 */
export async function markFixStarting(
  atomic: AtomicOps,
  userNames: UserNames,
  item: DigestItem,
  start: string,
  user: string,
): Promise<string> {
  const earlier = (await atomic.indexAll(startingKey(item))).find(
    (member) => readMark(member)?.start === start,
  );
  if (earlier !== undefined) return earlier;
  // Named as its note on the digest will name them.
  const name = (await userNames(user).catch(() => undefined)) ?? 'Someone';
  const at = Date.now();
  const member = JSON.stringify({ start, user, name, at } satisfies StartingMark);
  await atomic.indexAdd(startingKey(item), member, at, undefined, STARTING_MS);
  return member;
}

/** The job started and its note is on the digest, or it did not start: the mark says nothing more. */
export async function dropFixStarting(atomic: AtomicOps, item: DigestItem, mark: string): Promise<void> {
  await atomic.indexRemove(startingKey(item), mark);
}

/** Who is starting a job for the item now: their form submitted, the job not yet noted on the digest. */
export async function fixesStarting(atomic: AtomicOps, item: DigestItem): Promise<string[]> {
  const names = (await atomic.indexAll(startingKey(item)))
    .map(readMark)
    .filter((mark) => mark !== undefined)
    .filter((mark) => Date.now() - mark.at < STARTING_MS)
    .map((mark) => mark.name);
  return [...new Set(names)];
}

/** A mark as written; one of the version before marks were named by their start has no `start` (it warns all the same). */
function readMark(member: string): StartingMark | undefined {
  const mark = readIndexMember<Omit<StartingMark, 'start'> & { start?: string }>(member, {
    user: 'string',
    name: 'string',
    at: 'number',
  });
  if (mark === undefined) return undefined;
  return { ...mark, start: typeof mark.start === 'string' ? mark.start : '' };
}
