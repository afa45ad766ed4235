import type { Logger } from '@slack/bolt';
import type { RedisClientType } from '@keyv/redis';

/** Marks a namespace whose keys use the one-namespace layout (see `moveDoubledKeys`). */
const LAYOUT_KEY = 'store-layout';
export const CURRENT_LAYOUT = '2';

export const layoutKey = (namespace: string) => `${namespace}:${LAYOUT_KEY}`;

/**
 * Records written before the one-namespace layout sit under `<namespace>::<namespace>:<key>`:
 * moved once to `<namespace>:<key>` (a key already there is newer, and wins), so an upgrade keeps
 * following its jobs and steering their threads.
 */
export async function moveDoubledKeys(
  client: RedisClientType,
  namespace: string,
  logger: Logger,
  retentionMs: number | undefined,
): Promise<void> {
  const oldPrefix = `${namespace}::${namespace}:`;
  let moved = 0;
  const moveOne = async (key: string) => {
    const target = `${namespace}:${key.slice(oldPrefix.length)}`;
    let renamed: boolean;
    try {
      renamed = Boolean(await client.renameNX(key, target));
    } catch (error) {
      // Another process starting at the same time moved it first.
      if (String(error).includes('no such key')) return;
      throw error;
    }
    if (!renamed) {
      await client.del(key);
      return;
    }
    moved += 1;
    // Written before keys expired: from now on they do, as the bot's own writes would make them.
    if (retentionMs !== undefined && (await client.pTTL(target)) === -1)
      await client.pExpire(target, retentionMs);
  };
  for await (const keys of client.scanIterator({ MATCH: `${globEscape(oldPrefix)}*`, COUNT: 1_000 })) {
    // A page at a time, its keys together: the client sends their commands in one go, so a hosted
    // Redis far away takes a few round trips a page, not a few a key.
    const before = moved;
    await Promise.all(keys.map(moveOne));
    if (Math.floor(moved / 10_000) > Math.floor(before / 10_000)) {
      logger.info(`moving stored records to the current key layout: ${moved} so far`);
    }
  }
  await client.set(layoutKey(namespace), CURRENT_LAYOUT);
  if (moved > 0) logger.info(`moved ${moved} stored record(s) to keys named ${namespace}:<key>`);
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
