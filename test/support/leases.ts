import { expect, vi } from 'vitest';
import { type HeldLease, type Lease, RENEWED_LEASE_MS, tryLease } from '../../src/store/lease.js';
import type { Store } from '../../src/store/store.js';

/**
 * A step a fake holds (its `until`) until the test lets it go: the work that lost its lease is in
 * that step, and only goes on once the test has seen the loss noticed (`loseToAnother`).
 */
export function heldStep(): { until: Promise<void>; release: () => void } {
  let release = () => {};
  const until = new Promise<void>((resolve) => (release = resolve));
  return { until, release };
}

/** Another worker's lease, as its work under it would claim with it. */
export function heldBy(lease: Lease): HeldLease {
  return {
    async claim(key, owner, ttlMs) {
      const outcome = await lease.claim(key, owner, ttlMs);
      if (outcome === 'lost') throw new Error(`${lease.key} is not held`);
      return outcome === 'claimed';
    },
    async confirm() {
      if (!(await lease.keepFor(RENEWED_LEASE_MS))) throw new Error(`${lease.key} is not held`);
    },
  };
}

/**
 * Lets a test make a lease taken through `store` lapse, as an event-loop stall or a Redis outage
 * longer than its TTL would, and hand it to another worker. It notes each lease's token as it is
 * taken, so it is called before the lease is. `logs`: the holder's log lines, where it says it lost
 * a lease.
 */
export function watchLeases(store: Store, logs: string[] = []) {
  const taken = vi.spyOn(store.atomic, 'setIfAbsent');
  const takeOver = async (name: string, ttlMs: number): Promise<Lease> => {
    const key = `lease:${name}`;
    const token = taken.mock.calls.filter(([takenKey]) => takenKey === key).at(-1)?.[1];
    if (token === undefined || !(await store.atomic.deleteIfValue(key, token))) {
      throw new Error(`${key} is not held`);
    }
    const other = await tryLease(store.atomic, name, ttlMs);
    if (!other) throw new Error(`another worker could not take ${key}`);
    return other;
  };
  return {
    /** The name of the lease last taken whose name starts with `prefix` (one named by an id the test does not know). */
    lastTaken(prefix: string): string | undefined {
      const key = taken.mock.calls
        .map(([takenKey]) => takenKey)
        .findLast((takenKey) => takenKey.startsWith(`lease:${prefix}`));
      return key?.slice('lease:'.length);
    },
    /** The lease `name` lapses and another worker takes it: that worker's lease. */
    takeOver,
    /**
     * While the holder's work is in a slow step, its renewed lease `name` lapses and another
     * worker takes it; resolves with that worker's lease once the holder's next renewal found it
     * gone (and said so in `logs`). From then on the holder must not do what the lease guards.
     */
    async loseToAnother(name: string): Promise<Lease> {
      const other = await takeOver(name, RENEWED_LEASE_MS);
      await expect
        .poll(() => logs.some((line) => line.includes(`lease:${name} was lost`)), { timeout: 10_000 })
        .toBe(true);
      return other;
    },
  };
}
