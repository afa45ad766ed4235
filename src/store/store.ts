import KeyvRedis, { createClient, type RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import { Keyv } from 'keyv';
import type { AtomicOps } from './atomic.js';
import { MemoryAtomicOps } from './memoryAtomic.js';
import { RedisAtomicOps } from './redisAtomic.js';

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

export class StoreUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Redis at ${withoutCredentials(url)} did not answer (${reason}). Check REDIS_URL and that Redis is running; ` +
        'the bot does not fall back to memory when REDIS_URL is set (leave it unset only to try the bot, which then forgets every job on restart)',
      { cause },
    );
    this.name = 'StoreUnavailableError';
  }
}

/** The URL without its user and password, fit for a log line. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'REDIS_URL';
  }
}

export function openMemoryStore(namespace: string, now: () => number = Date.now): Store {
  // Our own Map, not Keyv's default one, so the atomic ops can compare-and-set the records in it.
  const records = new Map<string, unknown>();
  const kv = new Keyv({ store: records, namespace, throwOnErrors: true });
  return {
    kind: 'memory',
    kv,
    atomic: new MemoryAtomicOps(now, records, (key) => kv._getKeyPrefix(key)),
    close: async () => {},
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
    const nextRaw = await kv.serializeData<T>({ value: next, expires: stored.expires });
    if (typeof nextRaw !== 'string') {
      throw new Error(`${key}: the store's serializer did not produce a string`);
    }
    if (await atomic.compareAndSet(key, raw, nextRaw)) return next;
  }
  throw new RecordContendedError(key, UPDATE_ATTEMPTS);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A Redis connection with the bot's settings. `onDown`/`onUp` hear about a connection lost and
 * found again after the first one; a failure to connect at all is the caller's to report.
 */
async function connectRedis(
  url: string,
  connectTimeoutMs: number,
  events: { onDown?: (error: Error) => void; onUp?: () => void } = {},
): Promise<RedisClientType> {
  let down = false;
  let everConnected = false;
  const client = createClient({
    url,
    // Fail commands at once while Redis is away instead of queueing them: a Slack user gets
    // "try again shortly" rather than a request that hangs until Redis returns.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: connectTimeoutMs,
      // At start a few quick tries, then a clear failure; once running, keep trying for good.
      reconnectStrategy: (retries: number, cause: Error) =>
        everConnected ? Math.min(100 * 2 ** retries, 5_000) : retries < 3 ? 200 : cause,
    },
  }) as RedisClientType;
  client.on('error', (error: Error) => {
    if (down || !everConnected) return;
    down = true;
    events.onDown?.(error);
  });
  client.on('ready', () => {
    everConnected = true;
    if (down) events.onUp?.();
    down = false;
  });
  try {
    await client.connect();
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new StoreUnavailableError(url, error);
  }
  return client;
}

async function quit(client: RedisClientType): Promise<void> {
  if (client.isOpen) await client.quit().catch(() => client.destroy());
}

export async function openRedisStore(options: {
  url: string;
  namespace: string;
  logger: Logger;
  connectTimeoutMs?: number;
}): Promise<Store> {
  const { logger, namespace } = options;
  const client = await connectRedis(options.url, options.connectTimeoutMs ?? 5_000, {
    onDown: (error) => logger.error(`Redis is unreachable (${error.message}); retrying in the background`),
    onUp: () => logger.info('Redis is reachable again'),
  });
  const adapter = new KeyvRedis(client, { namespace, throwOnErrors: true });
  const kv = new Keyv({ store: adapter, namespace, throwOnErrors: true });
  kv.on('error', () => {}); // reported by the client's own 'error' listener above
  // Keyv's own key functions, so compare-and-set hits the very key kv.get reads whatever layout
  // this Keyv version uses (today `<namespace>::<namespace>:<key>`).
  const recordKey = (key: string) => adapter.createKeyPrefix(kv._getKeyPrefix(key), adapter.namespace);
  return {
    kind: 'redis',
    kv,
    atomic: new RedisAtomicOps(client, namespace, recordKey),
    redis: client,
    close: () => quit(client),
  };
}

/** The store the configuration asks for: Redis when REDIS_URL is set, else memory. */
export function openStore(
  settings: { redisUrl: string | undefined; namespace: string },
  logger: Logger,
): Promise<Store> {
  return settings.redisUrl
    ? openRedisStore({ url: settings.redisUrl, namespace: settings.namespace, logger })
    : Promise.resolve(openMemoryStore(settings.namespace));
}
