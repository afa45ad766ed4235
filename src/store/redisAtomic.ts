import type { RedisClientType } from '@keyv/redis';
import type { AtomicOps, HeldClaim, LeaseHold, WindowCount } from './atomic.js';

// Compare-and-delete / compare-and-extend must be one Lua call: a GET then DEL could delete a
// lease another instance took over in between.
const DELETE_IF_VALUE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND_IF_VALUE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
// Likewise compare-and-set: another instance's write between our GET and SET would be lost.
// A missing key never matches, so a record deleted meanwhile is not brought back.
const COMPARE_AND_SET = `if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] then redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else redis.call('set', KEYS[1], ARGV[2], 'KEEPTTL') end
return 1`;

// Set-if-absent that a claimant may repeat: one call, so no other claimant slips in between.
const CLAIM = `local held = redis.call('get', KEYS[1])
if not held then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if held == ARGV[1] then return 1 end
return 0`;
// The same, in the same call as the check that the lease KEYS[2] is still ours (-1 when not).
const CLAIM_WHILE_HELD = `if redis.call('get', KEYS[2]) ~= ARGV[3] then return -1 end
${CLAIM}`;

/** AtomicOps on the Redis client that `@keyv/redis` connected, so there is one connection pool. */
export class RedisAtomicOps implements AtomicOps {
  /** `recordKey` maps a `kv` key to the Redis key Keyv stores it under. */
  constructor(
    private readonly client: RedisClientType,
    private readonly prefix: string,
    private readonly recordKey: (key: string) => string,
  ) {}

  private key(key: string) {
    return `${this.prefix}:${key}`;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    return (await this.client.set(this.key(key), value, { NX: true, PX: ttlMs })) === 'OK';
  }

  async claim(key: string, owner: string, ttlMs: number) {
    const result = await this.client.eval(CLAIM, {
      keys: [this.key(key)],
      arguments: [owner, String(ttlMs)],
    });
    return Number(result) === 1;
  }

  async claimWhileHeld(key: string, owner: string, ttlMs: number, lease: LeaseHold): Promise<HeldClaim> {
    const result = Number(
      await this.client.eval(CLAIM_WHILE_HELD, {
        keys: [this.key(key), this.key(lease.key)],
        arguments: [owner, String(ttlMs), lease.value],
      }),
    );
    return result === 1 ? 'claimed' : result === 0 ? 'taken' : 'lost';
  }

  async holder(key: string) {
    return (await this.client.get(this.key(key))) ?? undefined;
  }

  async deleteIfValue(key: string, value: string) {
    return (
      Number(await this.client.eval(DELETE_IF_VALUE, { keys: [this.key(key)], arguments: [value] })) === 1
    );
  }

  async extendIfValue(key: string, value: string, ttlMs: number) {
    const result = await this.client.eval(EXTEND_IF_VALUE, {
      keys: [this.key(key)],
      arguments: [value, String(ttlMs)],
    });
    return Number(result) === 1;
  }

  async indexAdd(key: string, member: string, score: number, cap?: number, ttlMs?: number) {
    const multi = this.client.multi().zAdd(this.key(key), { score, value: member });
    if (cap !== undefined) multi.zRemRangeByRank(this.key(key), 0, -cap - 1);
    if (ttlMs !== undefined) multi.pExpire(this.key(key), ttlMs);
    await multi.exec();
  }

  async indexRemove(key: string, member: string) {
    await this.client.zRem(this.key(key), member);
  }

  async indexNewest(key: string, limit: number) {
    return this.client.zRange(this.key(key), 0, limit - 1, { REV: true });
  }

  async indexAll(key: string) {
    return this.client.zRange(this.key(key), 0, -1);
  }

  async windowHit(
    key: string,
    nowMs: number,
    windowMs: number,
    id: string,
    limit: number,
  ): Promise<WindowCount> {
    const full = this.key(key);
    const [, , count, oldest, atLimit] = await this.client
      .multi()
      .zRemRangeByScore(full, '-inf', nowMs - windowMs)
      .zAdd(full, { score: nowMs, value: id }, { condition: 'NX' }) // a hit counted again keeps its first time
      .zCard(full)
      .zRangeWithScores(full, 0, 0)
      .zRangeWithScores(full, -limit, -limit) // none while fewer than `limit`
      .pExpire(full, windowMs)
      .exec();
    return windowCount(count, oldest, atLimit);
  }

  async windowHits(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowCount> {
    const full = this.key(key);
    const [, count, oldest, atLimit] = await this.client
      .multi()
      .zRemRangeByScore(full, '-inf', nowMs - windowMs)
      .zCard(full)
      .zRangeWithScores(full, 0, 0)
      .zRangeWithScores(full, -limit, -limit)
      .exec();
    return windowCount(count, oldest, atLimit);
  }

  async getRaw(key: string) {
    return (await this.client.get(this.recordKey(key))) ?? undefined;
  }

  async compareAndSet(key: string, expectedRaw: string, nextRaw: string, ttlMs?: number) {
    const result = await this.client.eval(COMPARE_AND_SET, {
      keys: [this.recordKey(key)],
      arguments: ttlMs === undefined ? [expectedRaw, nextRaw] : [expectedRaw, nextRaw, String(ttlMs)],
    });
    return Number(result) === 1;
  }
}

// Only the count and two hits cross the wire: a busy hour has thousands of hits.
function windowCount(count: unknown, oldest: unknown, atLimit: unknown): WindowCount {
  return { count: Number(count), oldestMs: scoreOf(oldest), limitLeavesMs: scoreOf(atLimit) };
}

function scoreOf(range: unknown): number | undefined {
  const hit = Array.isArray(range) ? (range[0] as { score: number } | undefined) : undefined;
  return hit === undefined ? undefined : Number(hit.score);
}
