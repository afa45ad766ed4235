import type { RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import type { StoreSettings } from '../config.js';
import { Keyv } from 'keyv';
import type { AtomicOps } from './atomic.js';
import { MemoryAtomicOps } from './memoryAtomic.js';

/**
 * The bot's state: a namespaced keyv for records, and the atomic operations that leases,
 * event dedupe and the rate-limit ledger need. Redis when REDIS_URL is set (shared by every
 * instance, survives restarts); otherwise in memory, which forgets everything on restart.
 */
export interface Store {
  readonly kind: 'redis' | 'memory';
  readonly kv: Keyv;
  readonly atomic: AtomicOps;
  /** The Redis connection (Redis only): the queues share it. */
  readonly redis?: RedisClientType;
  close(): Promise<void>;
}

/** How often the memory store drops what has expired. */
const SWEEP_EVERY_MS = 10 * 60_000;

export function openMemoryStore(
  namespace: string,
  now: () => number = Date.now,
  sweepEveryMs = SWEEP_EVERY_MS,
): Store {
  // Our own Map, not Keyv's default one, so the atomic ops can compare-and-set the records in it.
  const records = new Map<string, unknown>();
  const kv = new Keyv({ store: records, namespace, throwOnErrors: true });
  const atomic = new MemoryAtomicOps(now, records, (key) => kv._getKeyPrefix(key));
  // Keyv drops an expired record only when it is read: records nobody reads again go here.
  const sweep = async () => {
    atomic.sweep();
    for (const [key, raw] of records) {
      const stored = typeof raw === 'string' ? await kv.deserializeData(raw) : undefined;
      if (typeof stored?.expires === 'number' && Date.now() > stored.expires && records.get(key) === raw) {
        records.delete(key);
      }
    }
  };
  const sweeper = setInterval(() => void sweep().catch(() => {}), sweepEveryMs);
  sweeper.unref();
  return {
    kind: 'memory',
    kv,
    atomic,
    close: async () => clearInterval(sweeper),
  };
}

// Enough for a handful of writers of one record; more than that means something writes in a loop.
const UPDATE_ATTEMPTS = 20;

/** An update that kept losing to other writers of the same record, and was not applied. */
export class RecordContendedError extends Error {
  constructor(key: string, attempts: number) {
    super(`${key} changed under us on each of ${attempts} tries; the update was not applied`);
    this.name = 'RecordContendedError';
  }
}

// Optimistic compare-and-set (one Lua script), not WATCH/MULTI: WATCH needs a connection per update.
/**
 * Changes the `kv` record `key` so that no concurrent change of it is lost, in this process or
 * another: the write goes through only if no one wrote the record since we read it, and otherwise
 * the record is read again and `change` applied again. So `change` may run more than once and must
 * be a pure function of the value it is given. Undefined when there is no record (nothing written).
 */
export async function updateRecord<T>(
  store: Store,
  key: string,
  change: (value: T) => T,
  /** A new time to live from now; without it the record keeps the expiry it has. */
  ttlMs?: number,
): Promise<T | undefined> {
  const { atomic, kv } = store;
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
    // Writers that lost together would otherwise read and collide again together.
    if (attempt > 0) await sleep(Math.random() * Math.min(2 ** attempt, 50));
    const raw = await atomic.getRaw(key);
    if (raw === undefined) return undefined;
    const stored = await kv.deserializeData<T>(raw);
    // As kv.get sees it: an expired record is no record.
    if (stored?.value === undefined || (typeof stored.expires === 'number' && Date.now() > stored.expires)) {
      return undefined;
    }
    const next = change(stored.value);
    const expires = ttlMs === undefined ? stored.expires : Date.now() + ttlMs;
    const nextRaw = await kv.serializeData<T>({ value: next, expires });
    if (typeof nextRaw !== 'string') {
      throw new Error(`${key}: the store's serializer did not produce a string`);
    }
    if (await atomic.compareAndSet(key, raw, nextRaw, ttlMs)) return next;
  }
  throw new RecordContendedError(key, UPDATE_ATTEMPTS);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The store the configuration asks for: Redis when REDIS_URL is set, else memory. */
export async function openStore(
  settings: StoreSettings,
  logger: Logger,
  /** How long a job's record lives: records moved from an older key layout get it too. */
  options: { retentionMs: number; onCommandError?: (error: unknown) => void },
): Promise<Store> {
  const { redisUrl } = settings;
  if (!redisUrl) return openMemoryStore(settings.namespace);
  // Loaded only with Redis: a bot without it starts without the Redis client's code.
  const { openRedisStore } = await import('./redisStore.js');
  return openRedisStore({
    url: redisUrl,
    namespace: settings.namespace,
    tls: settings.tls,
    logger,
    retentionMs: options.retentionMs,
    ...(options.onCommandError ? { onCommandError: options.onCommandError } : {}),
  });
}
