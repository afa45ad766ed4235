import type { AtomicOps, HeldClaim, LeaseHold, WindowCount } from './atomic.js';

/** In-process AtomicOps: correct for one process, which is all the in-memory store serves. */
export class MemoryAtomicOps implements AtomicOps {
  private readonly values = new Map<string, { value: string; expiresAt: number }>();
  private readonly indexes = new Map<string, Map<string, number>>();
  /** When an index given a time to live goes, as its Redis key would. */
  private readonly indexExpiry = new Map<string, number>();

  /**
   * `records` is the Map the memory store's `kv` keeps its serialized values in, and `recordKey`
   * maps a `kv` key to its key there.
   */
  constructor(
    private readonly now: () => number,
    private readonly records: Map<string, unknown>,
    private readonly recordKey: (key: string) => string,
  ) {}

  private live(key: string) {
    const entry = this.values.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.values.delete(key);
      return undefined;
    }
    return entry;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    if (this.live(key)) return false;
    this.values.set(key, { value, expiresAt: this.now() + ttlMs });
    return true;
  }

  async claim(key: string, owner: string, ttlMs: number) {
    const held = this.live(key);
    if (held) return held.value === owner;
    this.values.set(key, { value: owner, expiresAt: this.now() + ttlMs });
    return true;
  }

  async claimWhileHeld(key: string, owner: string, ttlMs: number, lease: LeaseHold): Promise<HeldClaim> {
    if (this.live(lease.key)?.value !== lease.value) return 'lost';
    return (await this.claim(key, owner, ttlMs)) ? 'claimed' : 'taken';
  }

  async holder(key: string) {
    return this.live(key)?.value;
  }

  async deleteIfValue(key: string, value: string) {
    if (this.live(key)?.value !== value) return false;
    this.values.delete(key);
    return true;
  }

  async extendIfValue(key: string, value: string, ttlMs: number) {
    const entry = this.live(key);
    if (entry?.value !== value) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  private index(key: string) {
    const expiresAt = this.indexExpiry.get(key);
    if (expiresAt !== undefined && expiresAt <= this.now()) {
      this.indexes.delete(key);
      this.indexExpiry.delete(key);
    }
    let index = this.indexes.get(key);
    if (!index) {
      index = new Map();
      this.indexes.set(key, index);
    }
    return index;
  }

  private sorted(key: string) {
    return [...this.index(key).entries()].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  }

  async indexAdd(key: string, member: string, score: number, cap?: number, ttlMs?: number) {
    const index = this.index(key);
    index.set(member, score);
    if (ttlMs !== undefined) this.indexExpiry.set(key, this.now() + ttlMs);
    if (cap !== undefined && index.size > cap) {
      for (const [old] of this.sorted(key).slice(0, index.size - cap)) index.delete(old);
    }
  }

  async indexRemove(key: string, member: string) {
    this.index(key).delete(member);
  }

  async indexNewest(key: string, limit: number) {
    return this.sorted(key)
      .reverse()
      .slice(0, limit)
      .map(([member]) => member);
  }

  async indexAll(key: string) {
    return this.sorted(key).map(([member]) => member);
  }

  async windowHit(key: string, nowMs: number, windowMs: number, id: string, limit: number) {
    // A hit counted again keeps its first time.
    if (!this.index(key).has(id)) await this.indexAdd(key, id, nowMs);
    return this.windowHits(key, nowMs, windowMs, limit);
  }

  async windowHits(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowCount> {
    const index = this.index(key);
    for (const [member, at] of index) if (at <= nowMs - windowMs) index.delete(member);
    const times = [...index.values()].sort((a, b) => a - b);
    return { count: times.length, oldestMs: times[0], limitLeavesMs: times[times.length - limit] };
  }

  /** How many leases, markers and indexes it holds, expired or not. */
  get size() {
    return this.values.size + this.indexes.size;
  }

  /**
   * Drops every lease, marker and index whose time to live has passed, as Redis does by itself:
   * those nobody reads again (an event's dedupe marker, most of them) would otherwise stay for the
   * life of the process. The records of `kv` are `records`' to sweep (see openMemoryStore).
   */
  sweep() {
    const now = this.now();
    for (const [key, entry] of this.values) if (entry.expiresAt <= now) this.values.delete(key);
    // Redis keeps no empty sorted set either; reading an index here makes one.
    for (const [key, index] of this.indexes) {
      const expiresAt = this.indexExpiry.get(key);
      if (index.size > 0 && (expiresAt === undefined || expiresAt > now)) continue;
      this.indexes.delete(key);
      this.indexExpiry.delete(key);
    }
  }

  async getRaw(key: string) {
    const raw = this.records.get(this.recordKey(key));
    return typeof raw === 'string' ? raw : undefined;
  }

  // No await between the compare and the set: no other caller can run in between. The expiry of a
  // Map-backed Keyv lives in the serialized value itself, so `ttlMs` needs nothing more here.
  async compareAndSet(key: string, expectedRaw: string, nextRaw: string, _ttlMs?: number) {
    const full = this.recordKey(key);
    if (this.records.get(full) !== expectedRaw) return false;
    this.records.set(full, nextRaw);
    return true;
  }
}
