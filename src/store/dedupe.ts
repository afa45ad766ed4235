import type { AtomicOps } from './atomic.js';

// Slack retries an undelivered event for up to about an hour; a day covers that with room.
const DEDUPE_TTL_MS = 24 * 3_600_000;

/**
 * True the first time `key` is seen by any instance sharing the store, false after.
 * Used so a retried or doubly-delivered Slack event acts once.
 */
export function firstSighting(atomic: AtomicOps, key: string, ttlMs = DEDUPE_TTL_MS): Promise<boolean> {
  return atomic.setIfAbsent(`seen:${key}`, '1', ttlMs);
}
