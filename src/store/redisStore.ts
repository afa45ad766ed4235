import KeyvRedis, { createClient, type RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import { Keyv } from 'keyv';
import { RedisAtomicOps } from './redisAtomic.js';
import type { Store } from './store.js';

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
