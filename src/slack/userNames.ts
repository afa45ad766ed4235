import type { Logger, webApi } from '@slack/bolt';
import type { UserNames } from './plainText.js';

const TTL_MS = 3_600_000;
const MAX_ENTRIES = 2_000;

/** Display names from `users.info`, cached for an hour so a busy thread costs few calls. */
export function cachedUserNames(client: webApi.WebClient, logger: Logger): UserNames {
  const cache = new Map<string, { name: string | undefined; at: number }>();
  let warned = false;
  return async (userId) => {
    const hit = cache.get(userId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.name;
    let name: string | undefined;
    try {
      const { user } = await client.users.info({ user: userId });
      name =
        user?.profile?.display_name || user?.profile?.real_name || user?.real_name || user?.name || undefined;
    } catch (error) {
      if (!warned) logger.warn(`could not read user names (users.info): ${String(error)}`);
      warned = true;
      return undefined; // not cached: the next message asks again
    }
    warned = false;
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(userId, { name, at: Date.now() });
    return name;
  };
}
