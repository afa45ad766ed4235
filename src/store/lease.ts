import { randomUUID } from 'node:crypto';
import type { AtomicOps } from './atomic.js';

export interface Lease {
  readonly key: string;
  release(): Promise<void>;
  /** Keeps the lease for `ttlMs` from now instead of releasing it; false when it is no longer ours. */
  keepFor(ttlMs: number): Promise<boolean>;
}

/**
 * Takes a lease (SET NX PX) that only its holder can release. A lease expires by itself, so
 * a crashed holder blocks the work for at most `ttlMs`; callers pick a TTL well above the
 * time the guarded work takes.
 */
export async function tryLease(atomic: AtomicOps, name: string, ttlMs: number): Promise<Lease | undefined> {
  const key = `lease:${name}`;
  const token = randomUUID();
  if (!(await atomic.setIfAbsent(key, token, ttlMs))) return undefined;
  return {
    key,
    release: async () => {
      await atomic.deleteIfValue(key, token);
    },
    keepFor: (keepMs) => atomic.extendIfValue(key, token, keepMs),
  };
}

/**
 * The TTL of a lease renewed while its work runs (`withRenewedLease`): a live holder keeps it
 * however long Slack or Mintlify take, renewing every 2 s, and a holder that crashed holds the
 * guarded work (a start, a notice, a digest) back 6 s at most.
 */
export const RENEWED_LEASE_MS = 6_000;

/**
 * Renews the lease every third of `ttlMs` until the returned function is called, so a live holder
 * keeps it however long its work takes, and a holder that crashed blocks the work for `ttlMs` at most.
 */
function keepRenewed(lease: Lease, ttlMs: number): () => void {
  const renew = setInterval(() => void lease.keepFor(ttlMs).catch(() => {}), Math.max(1, ttlMs / 3));
  renew.unref();
  return () => clearInterval(renew);
}

/**
 * Runs `work` while holding the lease, or runs nothing when another holder has it. With `renew`,
 * the lease is renewed while `work` runs (see `keepRenewed`).
 */
export async function withLease<T>(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  work: () => Promise<T>,
  options: { renew?: boolean; waitMs?: number } = {},
): Promise<{ ran: true; value: T } | { ran: false }> {
  let lease = await tryLease(atomic, name, ttlMs);
  // Held by a holder that may have died: its lease lapses within ttlMs, so waiting a little longer settles it.
  for (const until = Date.now() + (options.waitMs ?? 0); !lease && Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_RETRY_MS));
    lease = await tryLease(atomic, name, ttlMs);
  }
  if (!lease) return { ran: false };
  const stopRenewing = options.renew ? keepRenewed(lease, ttlMs) : () => {};
  try {
    return { ran: true, value: await work() };
  } finally {
    stopRenewing();
    await lease.release().catch(() => {}); // it expires on its own if Redis is away now
  }
}

/** `withLease`, renewing the lease while `work` runs (see `keepRenewed`). */
export function withRenewedLease<T>(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  work: () => Promise<T>,
  options: { waitMs?: number } = {},
): Promise<{ ran: true; value: T } | { ran: false }> {
  return withLease(atomic, name, ttlMs, work, { ...options, renew: true });
}

const LEASE_RETRY_MS = 250;
