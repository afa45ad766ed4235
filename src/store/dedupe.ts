import { randomUUID } from 'node:crypto';
import type { AtomicOps } from './atomic.js';

// Slack retries an undelivered event for up to about an hour; a day covers that with room.
const DEDUPE_TTL_MS = 24 * 3_600_000;

/**
 * True the first time `key` is seen by any process sharing the store, false after. Used so a
 * retried or doubly-delivered Slack event acts once. `by` names who sees it (a queue job): the same
 * queue job run again after its process died still counts as the first, so its work is not lost.
 */
export function firstSighting(
  atomic: AtomicOps,
  key: string,
  options: { by?: string; ttlMs?: number } = {},
): Promise<boolean> {
  return atomic.claim(`seen:${key}`, options.by ?? randomUUID(), options.ttlMs ?? DEDUPE_TTL_MS);
}

/** Who saw `key` first (the `by` of its first sighting); undefined when nobody has, or it expired. */
export function firstSeenBy(atomic: AtomicOps, key: string): Promise<string | undefined> {
  return atomic.holder(`seen:${key}`);
}
