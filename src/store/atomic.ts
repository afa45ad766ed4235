/**
 * The few operations that must be atomic across bot instances: claim a key once, release it
 * only if we still hold it, ordered indexes, and compare-and-set on a record `kv` keeps. Redis
 * does them natively; the in-memory versions give the same answers inside one process (the store
 * a single instance or the sandbox uses).
 */
export interface AtomicOps {
  /** SET key value NX PX ttl: true when this call created the key. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Like `setIfAbsent`, but also true when the key already holds `owner` (the same claimant, again). */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * `claim`, only while the lease `lease.key` still holds `lease.value`, in one step: `lost`, and
   * nothing claimed, when it does not. No stall between a check of the lease and the claim can then
   * let a holder whose lease lapsed claim what its successor may claim too.
   */
  claimWhileHeld(key: string, owner: string, ttlMs: number, lease: LeaseHold): Promise<HeldClaim>;
  /** What the key holds (a claim's owner), undefined when nothing does. */
  holder(key: string): Promise<string | undefined>;
  /** Deletes the key only while it still holds `value` (releasing a lease we own). */
  deleteIfValue(key: string, value: string): Promise<boolean>;
  /** Extends the key's TTL only while it still holds `value` (renewing a lease we own). */
  extendIfValue(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Adds (or re-scores) a member of an ordered index; keeps at most `cap` highest scores. With
   * `ttlMs`, the whole index expires that long after its last add.
   */
  indexAdd(key: string, member: string, score: number, cap?: number, ttlMs?: number): Promise<void>;
  indexRemove(key: string, member: string): Promise<void>;
  /** Members, highest score first. */
  indexNewest(key: string, limit: number): Promise<string[]>;
  /** Every member, lowest score first. */
  indexAll(key: string): Promise<string[]>;
  /**
   * Records the hit `id` at `nowMs` (one recorded already keeps its time) and drops hits older than
   * the window; returns how many are left, the oldest, and the one whose leaving brings the count
   * below `limit`.
   */
  windowHit(key: string, nowMs: number, windowMs: number, id: string, limit: number): Promise<WindowCount>;
  /** `windowHit`'s answer without recording a hit. */
  windowHits(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowCount>;
  /**
   * The string the store's `kv` holds for its key `key` (Keyv's serialized `{ value, expires }`),
   * undefined when there is none. Unlike the operations above, `key` is a `kv` key, not one of
   * our own: this and `compareAndSet` work on the records `kv.get` reads.
   */
  getRaw(key: string): Promise<string | undefined>;
  /**
   * Replaces the `kv` record `key` with `nextRaw` only while it still holds `expectedRaw`: false
   * when another writer got there first (or the record is gone). `ttlMs` sets a new expiry;
   * without it the record keeps the one it has. The `expires` inside `nextRaw` is the caller's to
   * keep in step, as `kv.get` goes by it.
   */
  compareAndSet(key: string, expectedRaw: string, nextRaw: string, ttlMs?: number): Promise<boolean>;
}

/** A lease as held: its key, and the token it holds while it is ours. */
export interface LeaseHold {
  key: string;
  value: string;
}

/** `claimWhileHeld`'s answer: `taken` when another claimant holds the key. */
export type HeldClaim = 'claimed' | 'taken' | 'lost';

/** A rolling window's hits: only the count and two times travel, however many hits there are. */
export interface WindowCount {
  count: number;
  oldestMs: number | undefined;
  /**
   * While the count is at least the `limit` asked about: the time of the `limit`-th newest hit, the
   * one whose leaving brings the count below it (the oldest when the count is just the limit).
   */
  limitLeavesMs: number | undefined;
}
