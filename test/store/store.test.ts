import { createClient } from '@keyv/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { firstSighting } from '../../src/store/dedupe.js';
import { tryLease, withLease } from '../../src/store/lease.js';
import { AGENT_USES_PER_HOUR, RateLedger } from '../../src/store/rateLedger.js';
import {
  refuseUnsupported,
  StoreUnavailableError,
  warnUnlessNoEviction,
} from '../../src/store/redisProblems.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import type { MemoryAtomicOps } from '../../src/store/memoryAtomic.js';
import { openMemoryStore, type Store } from '../../src/store/store.js';
import { startMuteProxy } from '../support/muteProxy.js';
import { startPrivateRedis } from '../support/privateRedis.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
const opened: Store[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

const kinds = {
  memory: async (namespace: string) => openMemoryStore(namespace),
  redis: async (namespace: string) => openRedisStore({ url: TEST_REDIS_URL, namespace, logger }),
};

describe.each(Object.entries(kinds))('the %s store', (_kind, open) => {
  const fresh = async (namespace = uniqueNamespace('store')) => {
    const store = await open(namespace);
    opened.push(store);
    return store;
  };

  it('keeps records under its namespace', async () => {
    const store = await fresh();
    await store.kv.set('job:1', { id: '1', status: 'active' });
    expect(await store.kv.get('job:1')).toEqual({ id: '1', status: 'active' });
    expect(await store.kv.get('job:2')).toBeUndefined();
  });

  it('lets one holder at a time take a lease, and only the holder release it', async () => {
    const store = await fresh();
    const first = await tryLease(store.atomic, 'notify:job-1:completed', 10_000);
    expect(first).toBeDefined();
    expect(await tryLease(store.atomic, 'notify:job-1:completed', 10_000)).toBeUndefined();
    expect(await store.atomic.deleteIfValue('lease:notify:job-1:completed', 'not-the-token')).toBe(false);
    await first?.release();
    const ran = await withLease(store.atomic, 'notify:job-1:completed', 10_000, async () => 'posted');
    expect(ran).toEqual({ ran: true, value: 'posted' });
  });

  it('lets a lease expire so a crashed holder blocks nobody for long', async () => {
    const store = await fresh();
    expect(await tryLease(store.atomic, 'short', 30)).toBeDefined();
    await expect.poll(async () => (await tryLease(store.atomic, 'short', 30)) !== undefined).toBe(true);
  });

  it('sees a key for the first time exactly once', async () => {
    const store = await fresh();
    const sightings = await Promise.all([1, 2, 3].map(() => firstSighting(store.atomic, 'event:Ev1')));
    expect(sightings.filter(Boolean)).toHaveLength(1);
  });

  it('lets the queue job that saw a key first see it again after a crash, and no other', async () => {
    const store = await fresh();
    const seen = (by: string) => firstSighting(store.atomic, 'message:C1:1.2', { by });
    expect(await seen('message_to_bot-Ev1')).toBe(true);
    expect(await seen('thread_reply-Ev2')).toBe(false); // the same message, delivered as another event
    expect(await seen('message_to_bot-Ev1')).toBe(true); // the first queue job, run again
  });

  it('keeps an ordered index, newest first, capped', async () => {
    const store = await fresh();
    for (const [member, score] of [
      ['a', 1],
      ['b', 3],
      ['c', 2],
      ['d', 4],
    ] as const) {
      await store.atomic.indexAdd('channel:C1', member, score, 3);
    }
    expect(await store.atomic.indexNewest('channel:C1', 2)).toEqual(['d', 'b']);
    expect(await store.atomic.indexAll('channel:C1')).toEqual(['c', 'b', 'd']);
    await store.atomic.indexRemove('channel:C1', 'b');
    expect(await store.atomic.indexAll('channel:C1')).toEqual(['c', 'd']);
  });

  it('counts agent uses in a rolling hour', async () => {
    const store = await fresh();
    let now = Date.parse('2026-01-01T10:00:00Z');
    const ledger = new RateLedger(store, () => now);
    await ledger.recordUse('proj', 'create:job-1');
    now += 30 * 60_000;
    const budget = await ledger.recordUse('proj', 'create:job-2');
    expect(budget).toMatchObject({ used: 2, remaining: AGENT_USES_PER_HOUR - 2 });
    expect(budget.nextFreeAt?.toISOString()).toBe('2026-01-01T11:00:00.000Z');
    // The same use counted again (a write that timed out had landed after all) is still one, from
    // its first time.
    now += 10 * 60_000;
    expect(await ledger.recordUse('proj', 'create:job-1')).toMatchObject({ used: 2 });
    now += 21 * 60_000;
    expect(await ledger.current('proj')).toMatchObject({ used: 1 });
    expect(await ledger.current('other')).toMatchObject({ used: 0, nextFreeAt: undefined });
  });

  it('says no agent use is left while Mintlify’s refusal for its limit holds, whatever its own count', async () => {
    const store = await fresh();
    let now = Date.parse('2026-01-01T10:00:00Z');
    const ledger = new RateLedger(store, () => now);
    await ledger.recordUse('proj', 'create:job-1');
    // Mintlify said when to come back: none left until then, and that is when one frees up.
    await ledger.refused('proj', 10 * 60_000);
    expect(await ledger.current('proj')).toEqual({
      used: 1,
      remaining: 0,
      nextFreeAt: new Date('2026-01-01T10:10:00Z'),
    });
    expect(await ledger.current('other')).toMatchObject({ remaining: AGENT_USES_PER_HOUR });
    now += 10 * 60_000 + 1;
    expect(await ledger.current('proj')).toMatchObject({ remaining: AGENT_USES_PER_HOUR - 1 });
    // It did not say: none left for a few minutes, with no time promised but the bot's own oldest use's.
    await ledger.refused('proj', undefined);
    expect(await ledger.current('proj')).toEqual({
      used: 1,
      remaining: 0,
      nextFreeAt: new Date('2026-01-01T11:00:00Z'),
    });
    now += 5 * 60_000 + 1;
    expect(await ledger.current('proj')).toMatchObject({ remaining: AGENT_USES_PER_HOUR - 1 });
    // A use Mintlify took after a refusal: its limit no longer holds.
    await ledger.refused('proj', 30 * 60_000);
    expect(await ledger.recordUse('proj', 'follow-up:2')).toMatchObject({
      used: 2,
      remaining: AGENT_USES_PER_HOUR - 2,
    });
    expect(await ledger.current('proj')).toMatchObject({ remaining: AGENT_USES_PER_HOUR - 2 });
    // A use sent before a refusal, whose answer came after it, does not lift it.
    now += 1_000;
    await ledger.refused('proj', 30 * 60_000);
    expect(await ledger.recordUse('proj', 'create:job-3', now - 500)).toMatchObject({
      used: 3,
      remaining: 0,
    });
    expect(await ledger.current('proj')).toMatchObject({ remaining: 0 });
  });

  it('says an agent use frees up when one does, with more uses counted than the limit', async () => {
    const store = await fresh();
    const start = Date.parse('2026-01-01T10:00:00Z');
    let now = start;
    const ledger = new RateLedger(store, () => now);
    // Two over the limit in the bot's hour (Mintlify's hour is not the bot's: a use counted late).
    for (let i = 0; i < AGENT_USES_PER_HOUR + 2; i += 1) {
      await ledger.recordUse('proj', `use-${i}`);
      now += 10_000;
    }
    // The oldest two leaving free nothing; the third does.
    const spent = await ledger.current('proj');
    expect(spent).toMatchObject({ used: AGENT_USES_PER_HOUR + 2, remaining: 0 });
    expect(spent.nextFreeAt).toEqual(new Date(start + 20_000 + 3_600_000));
    now = spent.nextFreeAt!.getTime() - 1;
    expect(await ledger.current('proj')).toMatchObject({ remaining: 0 });
    now += 2;
    expect(await ledger.current('proj')).toMatchObject({ used: AGENT_USES_PER_HOUR - 1, remaining: 1 });
    // Just at the limit, the oldest leaving frees one.
    expect((await ledger.recordUse('proj', 'use-again')).nextFreeAt).toEqual(
      new Date(start + 30_000 + 3_600_000),
    );
  });
});

describe('the memory store', () => {
  it('drops what has expired by itself, as Redis does, read again or not', async () => {
    let now = Date.now();
    const store = openMemoryStore(uniqueNamespace('store'), () => now, 20);
    opened.push(store);
    const atomic = store.atomic as MemoryAtomicOps;
    const records = store.kv.store as Map<string, unknown>;
    await store.kv.set('gone', 'soon', 1);
    await store.kv.set('kept', 'for a day', 86_400_000);
    await store.kv.set('forever', 'no expiry');
    expect(await firstSighting(store.atomic, 'event:Ev1')).toBe(true);
    expect(await tryLease(store.atomic, 'brief', 1_000)).toBeDefined();
    await store.atomic.indexAdd('recent', 'job-1', 1, undefined, 1_000);
    await store.atomic.indexAdd('all', 'job-1', 1);
    expect(await store.atomic.indexAll('never-written')).toEqual([]); // Redis keeps no empty index
    expect(atomic.size).toBe(5);

    now += 2_000; // the lease and the index are past their time; the event's marker is not
    await expect.poll(() => atomic.size).toBe(2);
    expect(await firstSighting(store.atomic, 'event:Ev1')).toBe(false);
    expect(await store.atomic.indexAll('all')).toEqual(['job-1']);
    await expect.poll(() => records.size).toBe(2);
    expect(await store.kv.get('kept')).toBe('for a day');
    expect(await store.kv.get('forever')).toBe('no expiry');
  });
});

describe('the redis store', () => {
  it('survives a restart: a new connection on the same namespace reads what the old one wrote', async () => {
    const namespace = uniqueNamespace('restart');
    const before = await openRedisStore({ url: TEST_REDIS_URL, namespace, logger });
    await before.kv.set('thread:C1:1.2', 'job-1');
    await before.close();
    const after = await openRedisStore({ url: TEST_REDIS_URL, namespace, logger });
    opened.push(after);
    expect(await after.kv.get('thread:C1:1.2')).toBe('job-1');
  });

  it('moves records written under the doubled namespace of earlier versions, once', async () => {
    const namespace = uniqueNamespace('layout');
    const raw = createClient({ url: TEST_REDIS_URL });
    await raw.connect();
    try {
      const old = `${namespace}::${namespace}:thread:C1:9.9`;
      await raw.set(old, JSON.stringify({ value: 'job-old', expires: null }));
      const lines: string[] = [];
      const heard = createLogger({ level: 'info', secrets: [], sink: (line) => lines.push(line) });
      const store = await openRedisStore({ url: TEST_REDIS_URL, namespace, logger: heard });
      opened.push(store);
      expect(await store.kv.get('thread:C1:9.9')).toBe('job-old');
      expect(await raw.exists(old)).toBe(0);
      expect(await raw.exists(`${namespace}:thread:C1:9.9`)).toBe(1);
      expect(lines.filter((line) => line.includes('moved 1 stored record(s)'))).toHaveLength(1);
      // Once done, not looked for again.
      await raw.set(old, JSON.stringify({ value: 'job-stale', expires: null }));
      opened.push(await openRedisStore({ url: TEST_REDIS_URL, namespace, logger: heard }));
      expect(await raw.exists(old)).toBe(1);
      await raw.del([old, `${namespace}:thread:C1:9.9`, `${namespace}:store-layout`]);
    } finally {
      await raw.quit();
    }
  });

  it('keeps a record the current layout holds already (the newer), and drops its old copy', async () => {
    const namespace = uniqueNamespace('layout');
    const raw = createClient({ url: TEST_REDIS_URL });
    await raw.connect();
    try {
      const old = `${namespace}::${namespace}:thread:C1:9.9`;
      const current = `${namespace}:thread:C1:9.9`;
      await raw.set(old, JSON.stringify({ value: 'job-old', expires: null }));
      await raw.set(current, JSON.stringify({ value: 'job-new', expires: null }));
      const store = await openRedisStore({ url: TEST_REDIS_URL, namespace, logger });
      opened.push(store);
      expect(await store.kv.get('thread:C1:9.9')).toBe('job-new');
      expect(await raw.exists(old)).toBe(0);
      await raw.del([current, `${namespace}:store-layout`]);
    } finally {
      await raw.quit();
    }
  });

  it('moves many records of the old layout even when moving them takes longer than the start may', async () => {
    const redis = await startPrivateRedis();
    // Every round trip takes 60 ms: the start's checks take a few (well within its 600 ms, on a busy
    // machine too), the move of 12,000 records dozens, so a move counted in the start's time would
    // make it fail.
    const proxy = await startMuteProxy(redis, { delayMs: 60 });
    const namespace = uniqueNamespace('layout-many');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      const count = 12_000;
      for (let from = 0; from < count; from += 1_000) {
        const batch = raw.multi();
        for (let i = from; i < from + 1_000; i++)
          batch.set(`${namespace}::${namespace}:job:${i}`, `{"value":${i}}`);
        await batch.exec();
      }
      const lines: string[] = [];
      const heard = createLogger({ level: 'info', secrets: [], sink: (line) => lines.push(line) });
      const startTimeoutMs = 600;
      const openedAt = Date.now();
      const store = await openRedisStore({
        url: proxy.url,
        namespace,
        logger: heard,
        startTimeoutMs,
        retentionMs: 86_400_000,
      });
      opened.push(store);
      // The test's premise, not a speed claim (a slower machine only adds to it): the move outlasted
      // the start's limit, so that limit did not cover it.
      expect(Date.now() - openedAt).toBeGreaterThan(startTimeoutMs);
      expect(await store.kv.get('job:11999')).toBe(11_999);
      expect(lines.filter((line) => line.includes(`moved ${count} stored record(s)`))).toHaveLength(1);
      expect(lines.some((line) => line.includes('moving stored records to the current key layout: '))).toBe(
        true,
      );
      expect(await raw.pTTL(`${namespace}:job:0`)).toBeGreaterThan(0);
      const left: string[] = [];
      for await (const keys of raw.scanIterator({ MATCH: `${namespace}::*`, COUNT: 1_000 }))
        left.push(...keys);
      expect(left).toEqual([]);
    } finally {
      await raw.quit();
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await proxy.close();
      await redis.close();
    }
  });

  it('warns at start when Redis may evict keys (BullMQ needs noeviction)', async () => {
    const redis = await startPrivateRedis();
    try {
      const lines: string[] = [];
      const heard = createLogger({ level: 'info', secrets: [], sink: (line) => lines.push(line) });
      opened.push(await openRedisStore({ url: redis.url, namespace: uniqueNamespace(), logger: heard }));
      expect(lines.filter((line) => line.includes('maxmemory-policy'))).toHaveLength(0);
      await redis.command('CONFIG SET maxmemory-policy allkeys-lru');
      opened.push(await openRedisStore({ url: redis.url, namespace: uniqueNamespace(), logger: heard }));
      const warnings = lines.filter((line) => line.includes("Redis's maxmemory-policy is allkeys-lru"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('noeviction');
    } finally {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await redis.close();
    }
  });

  it('says nothing of the eviction policy when Redis’s INFO keeps it to itself (some hosted plans)', () => {
    const lines: string[] = [];
    const heard = createLogger({ level: 'debug', secrets: [], sink: (line) => lines.push(line) });
    warnUnlessNoEviction('# Memory\r\nused_memory:1048576\r\nmaxmemory:0\r\n', heard);
    warnUnlessNoEviction('# Memory\r\nmaxmemory_policy:noeviction\r\n', heard);
    expect(lines).toEqual([]);
    warnUnlessNoEviction('# Memory\r\nmaxmemory_policy:volatile-lru\r\n', heard);
    expect(lines).toEqual([
      expect.stringContaining("WARN  docs-agent Redis's maxmemory-policy is volatile-lru:"),
    ]);
  });

  it('refuses a Redis older than BullMQ takes, naming its version; takes 5 and later, Valkey, and one that hides its version', () => {
    const info = (version: string) => `# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\n`;
    expect(() => refuseUnsupported('', '', info('4.0.14'))).toThrow(
      "is Redis 4.0.14, older than BullMQ's queues take: use Redis 6.2 or later",
    );
    for (const server of [info('5.0.7'), info('6.2.14'), info('7.2.4') + 'valkey_version:8.0.1\r\n', '']) {
      expect(() => refuseUnsupported('role:master\r\n', 'cluster_enabled:0\r\n', server)).not.toThrow();
    }
  });

  it('refuses to start, clearly, when Redis does not answer', async () => {
    await expect(
      openRedisStore({
        url: 'redis://127.0.0.1:1',
        namespace: uniqueNamespace(),
        logger,
        startTimeoutMs: 500,
      }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
