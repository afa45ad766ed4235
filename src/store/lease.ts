import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { AtomicOps, HeldClaim } from './atomic.js';

export interface Lease {
  readonly key: string;
  release(): Promise<void>;
  /** Keeps the lease for `ttlMs` from now instead of releasing it; false when it is no longer ours. */
  keepFor(ttlMs: number): Promise<boolean>;
  /** Claims `key` for `owner` (`AtomicOps.claim`) only while the lease is ours, in one step. */
  claim(key: string, owner: string, ttlMs: number): Promise<HeldClaim>;
}

/** Why work under a renewed lease gave up: the lease lapsed, and another worker may hold it now. */
export class LeaseLostError extends Error {
  constructor(key: string) {
    super(`${key} was lost: it lapsed and may be held by another worker`);
    this.name = 'LeaseLostError';
  }
}

/** What work under a renewed lease can do only while the lease is ours (see `withRenewedLease`). */
export interface HeldLease {
  /**
   * Claims `key` for `owner` (`AtomicOps.claim`: false when another claimant holds it) in the same
   * step as it checks the lease; throws as `lost` would, claiming nothing, when the lease is gone.
   */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * Renews the lease now; throws as `lost` would when it is no longer ours. Right before a step that
   * must happen once, where `lost` (only as fresh as the last renewal) may not know yet.
   */
  confirm(): Promise<void>;
}

/** Whether someone holds the lease `name` now (its work is under way somewhere). */
export async function leaseHeld(atomic: AtomicOps, name: string): Promise<boolean> {
  return (await atomic.holder(`lease:${name}`)) !== undefined;
}

/** Whether the lease token `token` was taken for `holder` (`tryLease`). */
export function leaseHolderIs(token: string | undefined, holder: string): boolean {
  return token?.startsWith(`${holder} `) === true;
}

/**
 * Takes a lease (SET NX PX) that only its holder can release. A lease expires by itself, so
 * a crashed holder blocks the work for at most `ttlMs`; callers pick a TTL well above the
 * time the guarded work takes. `holder` begins its token (`holder <random>`): whoever reads the
 * lease can tell whose work holds it (`leaseHolderIs`), each take of it still its own.
 */
export async function tryLease(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  holder?: string,
): Promise<Lease | undefined> {
  const key = `lease:${name}`;
  const token = holder === undefined ? randomUUID() : `${holder} ${randomUUID()}`;
  if (!(await atomic.setIfAbsent(key, token, ttlMs))) return undefined;
  return {
    key,
    release: async () => {
      await atomic.deleteIfValue(key, token);
    },
    keepFor: (keepMs) => atomic.extendIfValue(key, token, keepMs),
    claim: (claimKey, owner, claimMs) =>
      atomic.claimWhileHeld(claimKey, owner, claimMs, { key, value: token }),
  };
}

/**
 * The TTL of a lease renewed while its work runs (`withRenewedLease`): a live holder keeps it
 * however long Slack or Mintlify take, renewing every 2 s, and a holder that crashed holds the
 * guarded work (a start, a notice, a digest) back 6 s at most.
 */
export const RENEWED_LEASE_MS = 6_000;

/**
 * Renews the lease every third of `ttlMs` until stopped, so a live holder keeps it however long its
 * work takes, and a holder that crashed blocks the work for `ttlMs` at most. `lost` is aborted when
 * a renewal finds the lease no longer ours: it lapsed (an event-loop stall, or Redis away longer than
 * `ttlMs`) and another worker may hold it now. A renewal that fails (Redis away) tells nothing yet:
 * the next one that gets an answer does.
 */
function keepRenewed(
  lease: Lease,
  ttlMs: number,
  logger: Logger | undefined,
): { lost: AbortSignal; held: HeldLease; stop: () => void } {
  const losing = new AbortController();
  let stopped = false;
  const stop = () => {
    stopped = true;
    clearInterval(renew);
  };
  const lose = () => {
    stop(); // never ours again: its key holds another token now, or none
    const reason = new LeaseLostError(lease.key);
    logger?.warn(reason.message);
    losing.abort(reason);
  };
  const renewOnce = async () => {
    if (await lease.keepFor(ttlMs)) return;
    if (!stopped) lose(); // else the work is over, or was told already
  };
  const renew = setInterval(() => void renewOnce().catch(() => {}), Math.max(1, ttlMs / 3));
  renew.unref();
  const held: HeldLease = {
    claim: async (key, owner, claimMs) => {
      losing.signal.throwIfAborted();
      const outcome = await lease.claim(key, owner, claimMs); // a Redis error goes through: nothing is known then
      // Claimed while the lease was ours, it stands even if a renewal finds the lease lost meanwhile.
      if (outcome !== 'lost') return outcome === 'claimed';
      if (!stopped) lose();
      throw losing.signal.reason;
    },
    confirm: async () => {
      losing.signal.throwIfAborted();
      if (await lease.keepFor(ttlMs)) return;
      if (!stopped) lose();
      losing.signal.throwIfAborted();
    },
  };
  return { lost: losing.signal, held, stop };
}

/** Runs `work` while holding the lease, or runs nothing when another holder has it. */
export async function withLease<T>(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  work: () => Promise<T>,
  options: { waitMs?: number } = {},
): Promise<{ ran: true; value: T } | { ran: false }> {
  const lease = await takeLease(atomic, name, ttlMs, options.waitMs ?? 0);
  if (!lease) return { ran: false };
  try {
    return { ran: true, value: await work() };
  } finally {
    await lease.release().catch(() => {}); // it expires on its own if Redis is away now
  }
}

/**
 * `withLease`, renewing the lease while `work` runs (see `keepRenewed`). A renewal can find the
 * lease lost, and another worker may then be doing the same work: `work` calls
 * `lost.throwIfAborted()` right before each step that must happen once (a post, a create), and
 * work that gave up so answers `{ ran: false }`, as when another holder has the lease. Every caller
 * already tries again later then, and finds what the other holder did. Other errors go through.
 * `held.claim` claims a key in the same step as it checks the lease: for a step that must happen
 * once even when the work stalls past the lease right before it (`lost` is only as fresh as the
 * last renewal).
 */
export async function withRenewedLease<T>(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  work: (lost: AbortSignal, held: HeldLease) => Promise<T>,
  /**
   * `logger` hears when the lease is lost, which `{ ran: false }` alone does not say; `holder`
   * begins the lease's token (`tryLease`).
   */
  options: { waitMs?: number; logger?: Logger; holder?: string } = {},
): Promise<{ ran: true; value: T } | { ran: false }> {
  const lease = await takeLease(atomic, name, ttlMs, options.waitMs ?? 0, options.holder);
  if (!lease) return { ran: false };
  const renewal = keepRenewed(lease, ttlMs, options.logger);
  try {
    return { ran: true, value: await work(renewal.lost, renewal.held) };
  } catch (error) {
    if (renewal.lost.aborted && error === renewal.lost.reason) return { ran: false };
    throw error;
  } finally {
    renewal.stop();
    // Only while it holds our token: a lost lease stays with its new holder.
    await lease.release().catch(() => {}); // it expires on its own if Redis is away now
  }
}

/** `tryLease`, trying again for `waitMs` while another holder has it. */
async function takeLease(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  waitMs: number,
  holder?: string,
): Promise<Lease | undefined> {
  let lease = await tryLease(atomic, name, ttlMs, holder);
  // Held by a holder that may have died: its lease lapses within ttlMs, so waiting a little longer settles it.
  for (const until = Date.now() + waitMs; !lease && Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_RETRY_MS));
    lease = await tryLease(atomic, name, ttlMs, holder);
  }
  return lease;
}

const LEASE_RETRY_MS = 250;
