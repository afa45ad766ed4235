import type { Logger, types, webApi } from '@slack/bolt';
import type { BotIdentity } from '../jobs/threadContext.js';
import type { UserNames } from '../slack/plainText.js';
import { readChannelMessage } from '../slack/threadMessages.js';
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
 * second job for it. Best effort: the job stands whatever Slack answers, and two fixes of one
 * digest at the same moment may leave one line out.
 */
export async function noteFixOnDigest(
  client: webApi.WebClient,
  logger: Pick<Logger, 'warn'>,
  parts: { userNames: UserNames; bot: BotIdentity },
  digest: { channel: string; ts: string; struggle: StruggleValue },
  user: string,
): Promise<void> {
  try {
    const posted = await readChannelMessage(client, digest.channel, digest.ts);
    // Only the bot's own digest: anyone may post a message with buttons of the same action id.
    if (!posted || !parts.bot.botId || posted.bot_id !== parts.bot.botId) return;
    const wanted = JSON.stringify(digest.struggle);
    const known = await parts.userNames(user).catch(() => undefined);
    const name = known ?? 'Someone';
    let found = false;
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
      if (known !== undefined && fixesNoted(block.text.text).includes(name)) return block;
      // Plain text, as the item's line is (a name is a person's own words).
      const text = `${block.text.text}\n${FIX_NOTE}${name}${FIX_NOTE_END}`;
      // Slack's 3,000 characters reached after many fixes: the item and its notes stay as they are.
      if (text.length > SECTION_TEXT_MAX) return block;
      return { ...block, text: { ...block.text, text } };
    });
    if (!found || JSON.stringify(blocks) === JSON.stringify(posted.blocks ?? [])) return;
    await client.chat.update({
      channel: digest.channel,
      ts: digest.ts,
      text: posted.text ?? '',
      blocks: blocks as types.KnownBlock[],
      // Its mark (the digest's period) stays with it.
      ...(posted.metadata ? { metadata: posted.metadata as types.MessageMetadata } : {}),
    });
  } catch (error) {
    logger.warn(`could not note on the digest in ${digest.channel} that a fix started: ${String(error)}`);
  }
}
