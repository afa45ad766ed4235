import { isReadOnlyReply } from './storeErrors.js';

/** How long Redis may answer as a read-only replica before the bot stops, to start again. */
export const READ_ONLY_LIMIT_MS = 60_000;
/**
 * READONLY replies further apart than this are two spells, not one. A worker writes every few seconds;
 * a process with the web role that nobody writes to, only when it says it is alive (every 30 s).
 */
const SPELL_GAP_MS = 90_000;

export const STALE_PRIMARY =
  "Redis has answered as a read-only replica for over a minute: after a failover, this process's connections " +
  'stayed on the old primary (now a replica), and they do not move by themselves. The bot stops, for the process ' +
  'manager to start it again on the new primary (restart it if nothing does)';

/**
 * Hears every error of the bot's Redis commands (its store's, and its queues' and workers'), and
 * tells `onStale`, once, when Redis's READONLY replies last `limitMs`. During a failover they last
 * seconds, while a replica is promoted; a failover that keeps the old primary up as a replica
 * (ElastiCache's) leaves the connections made before it on that replica, for good: only new
 * connections reach the new primary, which a fresh start makes.
 */
export function watchReadOnly(options: {
  limitMs?: number;
  onStale: () => void;
  now?: () => number;
}): (error: unknown) => void {
  const limitMs = options.limitMs ?? READ_ONLY_LIMIT_MS;
  const now = options.now ?? Date.now;
  let since: number | undefined;
  let last = 0;
  let told = false;
  return (error) => {
    if (told || !isReadOnlyReply(error)) return;
    const at = now();
    if (since === undefined || at - last > SPELL_GAP_MS) since = at;
    last = at;
    if (at - since < limitMs) return;
    told = true;
    options.onStale();
  };
}
