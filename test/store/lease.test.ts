import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import {
  type HeldLease,
  type Lease,
  leaseHolderIs,
  tryLease,
  withRenewedLease,
} from '../../src/store/lease.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import { openMemoryStore, type Store } from '../../src/store/store.js';
import { watchLeases } from '../support/leases.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

// Renewed every 500 ms: a test sees a few renewals within two seconds, and a busy machine that runs
// one late, or a renewal that fails, does not lose the lease.
const TTL_MS = 1_500;
const NAME = 'notice:job-1:0:completed';

const quiet = createLogger({ level: 'error', secrets: [], sink: () => {} });
const opened: Store[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

const kinds = {
  memory: async (namespace: string) => openMemoryStore(namespace),
  redis: async (namespace: string) => openRedisStore({ url: TEST_REDIS_URL, namespace, logger: quiet }),
};

describe.each(Object.entries(kinds))('a renewed lease on the %s store', (_kind, open) => {
  const fresh = async () => {
    const store = await open(uniqueNamespace('lease'));
    opened.push(store);
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', secrets: [], sink: (line) => lines.push(line) });
    /** `work` under the renewed lease NAME, its loss told to `lines`. */
    const hold = <T>(work: (lost: AbortSignal, held: HeldLease) => Promise<T>, ttlMs = TTL_MS) =>
      withRenewedLease(store.atomic, NAME, ttlMs, work, { logger });
    return { store, lines, hold };
  };

  it('runs its work while renewing it, and releases it after', async () => {
    const { store, lines, hold } = await fresh();
    const renewals = vi.spyOn(store.atomic, 'extendIfValue');
    const held = await hold(async (lost) => {
      // Past its TTL: only the renewals keep it.
      await expect.poll(() => renewals.mock.calls.length).toBeGreaterThanOrEqual(4);
      expect(await tryLease(store.atomic, NAME, TTL_MS)).toBeUndefined();
      expect(lost.aborted).toBe(false);
      return 'posted';
    });
    expect(held).toEqual({ ran: true, value: 'posted' });
    expect(await tryLease(store.atomic, NAME, TTL_MS)).toBeDefined();
    expect(lines).toEqual([]);
  });

  it('lets an error of the work through, and releases the lease', async () => {
    const { store, hold } = await fresh();
    await expect(
      hold(async () => {
        throw new Error('Slack is down');
      }),
    ).rejects.toThrow('Slack is down');
    expect(await tryLease(store.atomic, NAME, TTL_MS)).toBeDefined();
  });

  it('tells the work when another worker took the lease, and work that gives up did not run', async () => {
    const { store, lines, hold } = await fresh();
    const leases = watchLeases(store);
    let other: Lease | undefined;
    let posted = false;
    const held = await hold(async (lost) => {
      other = await leases.takeOver(NAME, 10_000);
      await expect.poll(() => lost.aborted).toBe(true);
      expect(String(lost.reason)).toContain(`lease:${NAME} was lost: it lapsed`);
      lost.throwIfAborted();
      posted = true;
    });
    expect(held).toEqual({ ran: false });
    expect(posted).toBe(false);
    // Leaving, we did not release the other worker's lease.
    expect(await tryLease(store.atomic, NAME, TTL_MS)).toBeUndefined();
    expect(await other?.keepFor(10_000)).toBe(true);
    expect(lines.filter((line) => line.includes(`lease:${NAME} was lost`))).toHaveLength(1);
  });

  it('lets work that does not check finish, with its answer', async () => {
    const { store, hold } = await fresh();
    const leases = watchLeases(store);
    const held = await hold(async (lost) => {
      await leases.takeOver(NAME, 10_000);
      await expect.poll(() => lost.aborted).toBe(true);
      return 'posted';
    });
    expect(held).toEqual({ ran: true, value: 'posted' });
  });

  it('keeps the lease through a renewal that fails (Redis away for a moment)', async () => {
    const { store, lines, hold } = await fresh();
    const renewals = vi
      .spyOn(store.atomic, 'extendIfValue')
      .mockRejectedValueOnce(new Error('Redis is away'));
    const held = await hold(async (lost) => {
      await expect.poll(() => renewals.mock.calls.length).toBeGreaterThanOrEqual(4);
      expect(lost.aborted).toBe(false);
      return 'posted';
    });
    expect(held).toEqual({ ran: true, value: 'posted' });
    expect(lines).toEqual([]);
  });

  it('claims a key only while the lease is ours, checking it in the same step', async () => {
    const { store, lines, hold } = await fresh();
    const leases = watchLeases(store);
    expect(await store.atomic.setIfAbsent('ask:theirs', 'another claimant', 60_000)).toBe(true);
    let toldBeforeTheClaim: boolean | undefined;
    const held = await hold(async (lost, lease) => {
      expect(await lease.claim('ask:mine', 'me', 60_000)).toBe(true);
      expect(await lease.claim('ask:mine', 'me', 60_000)).toBe(true); // the same claimant, again
      expect(await lease.claim('ask:theirs', 'me', 60_000)).toBe(false);
      // Taken over with no renewal in between: the claim itself finds it, claims nothing, and throws.
      await leases.takeOver(NAME, 10_000);
      toldBeforeTheClaim = lost.aborted;
      await lease.claim('ask:later', 'me', 60_000);
      return 'asked';
      // No renewal runs meanwhile (one between the take-over's two steps would tell the loss first).
    }, 60_000);
    expect(toldBeforeTheClaim).toBe(false);
    expect(held).toEqual({ ran: false });
    expect(await store.atomic.setIfAbsent('ask:later', 'another claimant', 60_000)).toBe(true);
    expect(await store.atomic.setIfAbsent('ask:mine', 'another claimant', 60_000)).toBe(false);
    expect(await store.atomic.holder('ask:mine')).toBe('me');
    expect(await store.atomic.holder('ask:nobody')).toBeUndefined();
    expect(lines.filter((line) => line.includes(`lease:${NAME} was lost`))).toHaveLength(1);
  });

  it('confirms the lease is ours right before a step, finding a take-over no renewal has told yet', async () => {
    const { store, hold } = await fresh();
    const leases = watchLeases(store);
    let posted = false;
    const held = await hold(async (lost, lease) => {
      await lease.confirm();
      await leases.takeOver(NAME, 10_000);
      const toldBeforeTheCheck = lost.aborted;
      await lease.confirm();
      posted = true;
      return toldBeforeTheCheck;
      // No renewal runs meanwhile: the check itself finds it.
    }, 60_000);
    expect(held).toEqual({ ran: false });
    expect(posted).toBe(false);
  });

  it('names whose work holds a lease taken for it, each take its own', async () => {
    const { store } = await fresh();
    const first = await tryLease(store.atomic, NAME, TTL_MS, 'request-7');
    const token = await store.atomic.holder(`lease:${NAME}`);
    expect(leaseHolderIs(token, 'request-7')).toBe(true);
    expect(leaseHolderIs(token, 'request-70')).toBe(false);
    await first?.release();
    await tryLease(store.atomic, NAME, TTL_MS, 'request-7');
    expect(await store.atomic.holder(`lease:${NAME}`)).not.toBe(token);
  });

  it('keeps a claim made while the lease was ours, though a renewal finds it lost before the claim answers', async () => {
    const { store, hold } = await fresh();
    const leases = watchLeases(store);
    const claimWhileHeld = store.atomic.claimWhileHeld.bind(store.atomic);
    let lostWhileClaiming: AbortSignal | undefined;
    vi.spyOn(store.atomic, 'claimWhileHeld').mockImplementationOnce(async (...args) => {
      const outcome = await claimWhileHeld(...args);
      // The lease lapses right after the claim, and a renewal tells the work before the claim's answer is read.
      await leases.takeOver(NAME, 10_000);
      await expect.poll(() => lostWhileClaiming?.aborted).toBe(true);
      return outcome;
    });
    const held = await hold(async (lost, lease) => {
      lostWhileClaiming = lost;
      return lease.claim('ask:mine', 'me', 60_000);
    });
    expect(held).toEqual({ ran: true, value: true });
  });

  it('tells the work its lease lapsed at the first renewal that answers after Redis was away', async () => {
    const { store, hold } = await fresh();
    const renewals = vi.spyOn(store.atomic, 'extendIfValue').mockRejectedValue(new Error('Redis is away'));
    const held = await hold(async (lost) => {
      // Failing renewals for longer than the TTL: the lease lapses meanwhile, unheard of.
      await expect.poll(() => renewals.mock.calls.length).toBeGreaterThanOrEqual(5);
      expect(lost.aborted).toBe(false);
      renewals.mockRestore();
      await expect.poll(() => lost.aborted).toBe(true);
      lost.throwIfAborted();
      return 'posted';
    });
    expect(held).toEqual({ ran: false });
  });
});
