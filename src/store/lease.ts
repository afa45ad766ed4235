import { randomUUID } from 'node:crypto';
import type { AtomicOps } from './atomic.js';

export interface Lease {
  readonly key: string;
  release(): Promise<void>;
  /** Keeps the lease (still ours) for `ttlMs` from now instead of releasing it. */
  keepFor(ttlMs: number): Promise<void>;
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
    keepFor: async (keepMs) => {
      await atomic.extendIfValue(key, token, keepMs);
    },
  };
}

/** Runs `work` while holding the lease; returns undefined (and runs nothing) when another holder has it. */
export async function withLease<T>(
  atomic: AtomicOps,
  name: string,
  ttlMs: number,
  work: () => Promise<T>,
): Promise<{ ran: true; value: T } | { ran: false }> {
  const lease = await tryLease(atomic, name, ttlMs);
  if (!lease) return { ran: false };
  try {
    return { ran: true, value: await work() };
  } finally {
    await lease.release().catch(() => {}); // it expires on its own if Redis is away now
  }
}
