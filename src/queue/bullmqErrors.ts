import type { Logger } from '@slack/bolt';
import { ErrorCode } from 'bullmq';
import { redisRefusalOf } from '../store/storeErrors.js';

/** The console.warn this module put in place: one that replaced it since (a spy, say) is wrapped again. */
const quietedWarns = new WeakSet<typeof console.warn>();
/**
 * BullMQ prints, with console.warn, a line about a Redis eviction policy other than noeviction, once
 * per connection it sets up (some 15 at start). The store's start says the same once, in the bot's
 * log, with what to do (see `warnUnlessNoEviction`): BullMQ's lines are dropped, and only those.
 */
export function quietBullmqEvictionWarning(): void {
  const warn = console.warn;
  if (quietedWarns.has(warn)) return;
  const quieted = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('IMPORTANT! Eviction policy is')) return;
    warn(...args);
  };
  quietedWarns.add(quieted);
  console.warn = quieted;
}

/**
 * One connection error reaches every Queue and Worker on the connection, again on every retry; an
 * operator needs it once per burst (a burst ends after `quietMs` without that message). A job whose
 * lock lapsed while it ran, or that was gone when its run ended, is said in plain words, once per
 * queue and burst, whatever the job.
 */
export function errorReporter(
  logger: Logger,
  quietMs = 30_000,
  /** Hears every error, those not logged again in a burst too. */
  heard?: (error: unknown) => void,
): (source: string, error: unknown) => void {
  const lastSeen = new Map<string, number>();
  return (source, error) => {
    try {
      heard?.(error);
      // Redis's trouble in plain words: a full Redis's refusals name Lua scripts by hash, one line each.
      const message = redisRefusalOf(error) ?? (error instanceof Error ? error.message : String(error));
      const known = knownJobError(error);
      const burst = known ? `${source}: ${known}` : message;
      const now = Date.now();
      const seen = lastSeen.get(burst);
      lastSeen.set(burst, now);
      if (seen !== undefined && now - seen < quietMs) return;
      for (const [key, at] of lastSeen) if (now - at >= quietMs) lastSeen.delete(key);
      if (known === 'lock lapsed') {
        logger.warn(
          `${source}: a job's lock lapsed while it ran (Redis was away, or this process too busy, for longer than QUEUE_LOCK_MS); the queue runs it again, and what it did already is not done twice (${message})`,
        );
      } else if (known === 'job gone') {
        logger.warn(
          `${source}: a job was gone when its run ended: its lock had lapsed and another run finished it, or Redis lost it (evicted, flushed, or restarted empty) (${message})`,
        );
      } else {
        logger.error(`Queue error in ${source}: ${message}`);
      }
    } catch {
      // An event handler must not throw into BullMQ's emitter.
    }
  };
}

/**
 * BullMQ's errors for a running job whose lock lapsed (its renewal failed, or its next step found
 * the lock gone or another's), or that was gone when its run ended.
 */
function knownJobError(error: unknown): 'lock lapsed' | 'job gone' | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code } = error as { code?: unknown };
  if (code === ErrorCode.JobNotExist) return 'job gone';
  const lapsed =
    code === ErrorCode.JobLockNotExist ||
    code === ErrorCode.JobLockMismatch ||
    error.message.startsWith('could not renew lock for job ');
  return lapsed ? 'lock lapsed' : undefined;
}

/**
 * For an add that was sent: node-redis's failures of a command it never sent (offline, closed) and
 * Redis's refusals leave it out of the queue. Anything else (the connection lost with the add in
 * flight) may have landed.
 */
const NOT_SENT_OR_REFUSED = new Set([
  'ClientOfflineError',
  'ClientClosedError',
  'ErrorReply',
  'SimpleError',
  'BlobError',
]);

export function mayHaveLanded(error: unknown): boolean {
  // BullMQ wraps some of node-redis's errors (a closed client as its ConnectionClosedError): the cause tells.
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; depth += 1) {
    if (NOT_SENT_OR_REFUSED.has(current.name) || NOT_SENT_OR_REFUSED.has(current.constructor.name))
      return false;
    current = current.cause;
  }
  return true;
}
