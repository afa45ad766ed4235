import KeyvRedis, { createClient, type RedisClientOptions, type RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import { Keyv } from 'keyv';
import type { StoreSettings } from '../config.js';
import { withDeadlines } from './deadline.js';
import { CURRENT_LAYOUT, layoutKey, moveDoubledKeys } from './keyLayout.js';
import { RedisAtomicOps } from './redisAtomic.js';
import {
  isCertificateProblem,
  refuseUnsupported,
  StoreUnavailableError,
  warnUnlessNoEviction,
  withGreeting,
} from './redisProblems.js';
import type { Store } from './store.js';
import { isErrorReply, redisRefusalOf } from './storeErrors.js';

/** How long a connection may take to open (TCP and TLS). */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a command of the bot's own (its records and marks) may wait for its answer
 * (`withDeadlines`). A Slack request is bounded tighter still: queued within 1 s, or answered "try
 * again shortly" (web.ts). The Redis client's own per-command timeout is not used: it bounds only
 * the wait to send a command (never long: commands fail at once while Redis is away), and it costs
 * every command a timer and, five seconds later, an abort.
 */
const COMMAND_TIMEOUT_MS = 5_000;
/** A Redis that does not let the bot in within this stops the start (Redis answering nothing, say). */
const START_TIMEOUT_MS = 10_000;
/**
 * The client options every Redis connection of the bot shares (the store's, and through it the
 * queues'): TLS as configured, bounded connects, commands failed at once while Redis is away.
 */
function clientOptions(settings: StoreSettings & { redisUrl: string }): RedisClientOptions {
  return {
    url: settings.redisUrl,
    // Fail commands at once while Redis is away instead of queueing them: a Slack user gets
    // "try again shortly" rather than a request that hangs until Redis returns.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Used only with rediss:// (node-redis takes TLS from the URL's scheme).
      rejectUnauthorized: settings.tls.rejectUnauthorized,
      ...(settings.tls.ca === undefined ? {} : { ca: settings.tls.ca }),
    },
  };
}

/**
 * A Redis connection with the bot's settings. `onDown`/`onUp` hear about a connection lost and
 * found again after the first one; a failure to connect at all is the caller's to report.
 */
async function connectRedis(
  settings: StoreSettings & { redisUrl: string },
  events: { onDown?: (error: Error) => void; onUp?: () => void; onRefused?: (refusal: string) => void },
  start: { timeoutMs: number; prepare: (client: RedisClientType) => Promise<void> },
): Promise<RedisClientType> {
  let down = false;
  let everConnected = false;
  const options = clientOptions(settings);
  let client: RedisClientType | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    // In the try: the client reads the URL as it is made, and a password it cannot decode throws.
    client = createClient({
      ...options,
      socket: {
        ...options.socket,
        // At start a few quick tries, then a clear failure (at once for a certificate: trying again
        // changes nothing); once running, keep trying for good.
        reconnectStrategy: (retries: number, cause: Error) => {
          if (everConnected) return Math.min(100 * 2 ** retries, 5_000);
          return retries < 3 && !isCertificateProblem(cause) ? 200 : cause;
        },
      },
    }) as RedisClientType;
    // What Redis refused as the connection opened again (its credentials), told once until it is ready again.
    let refused: string | undefined;
    client.on('error', (error: Error) => {
      if (!everConnected) return;
      const refusal = redisRefusalOf(error);
      if (refusal !== undefined && refusal !== refused) {
        refused = refusal;
        events.onRefused?.(refusal);
      }
      if (down) return;
      down = true;
      events.onDown?.(error);
    });
    client.on('ready', () => {
      everConnected = true;
      if (down) events.onUp?.();
      down = false;
      refused = undefined;
    });
    const connecting = client;
    // A server that takes the connection but never answers (a stuck proxy) would hold the start forever.
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${Math.round(start.timeoutMs / 1000)} s`)),
        start.timeoutMs,
      );
    });
    await Promise.race([connecting.connect().then(() => start.prepare(connecting)), late]);
  } catch (error) {
    if (client?.isOpen) client.destroy();
    throw new StoreUnavailableError(settings.redisUrl, await withGreeting(settings.redisUrl, error));
  } finally {
    clearTimeout(timer);
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
  /** TLS settings for rediss:// URLs (default: the system's trusted certificates only). */
  tls?: StoreSettings['tls'];
  /** Tests shorten how long a start waits for a Redis that does not answer. */
  startTimeoutMs?: number;
  /** JOB_RETENTION_DAYS: records moved from the old key layout expire after it. */
  retentionMs?: number;
  /** Hears each failed command of the store's (see readOnlyWatch.ts). */
  onCommandError?: (error: unknown) => void;
}): Promise<Store> {
  const { logger, namespace, url: redisUrl } = options;
  const settings = { redisUrl, namespace, tls: options.tls ?? { rejectUnauthorized: true, ca: undefined } };
  if (redisUrl.startsWith('rediss://') && !settings.tls.rejectUnauthorized) {
    logger.warn(
      "REDIS_TLS_REJECT_UNAUTHORIZED=false: Redis's TLS certificate is not checked (the connection is encrypted, " +
        'but anyone on the path could pose as your Redis); set REDIS_TLS_CA instead if your provider publishes its CA',
    );
  }
  let layout: string | null = CURRENT_LAYOUT;
  const client = await connectRedis(
    settings,
    {
      onDown: (error) => logger.error(`Redis is unreachable (${error.message}); retrying in the background`),
      onUp: () => logger.info('Redis is reachable again'),
      onRefused: (refusal) => logger.error(refusal),
    },
    {
      timeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
      // Asked at once: one round trip to a hosted Redis rather than several, before the bot can listen.
      // Nothing is written before the Redis is known to be one the bot can work with.
      prepare: async (connected) => {
        const layoutRead = connected.get(layoutKey(namespace));
        layoutRead.catch(() => {}); // a Redis refused below answers it with an error nobody waits for
        // A provider that refuses a section of INFO it keeps to itself leaves that check be; INFO
        // itself refused (an ACL user without it) stops the start, through `memory`.
        const unlessRefused = (error: unknown) => {
          if (isErrorReply(error)) return '';
          throw error;
        };
        const [memory, replication, cluster, server] = await Promise.all([
          connected.info('memory'),
          connected.info('replication').catch(unlessRefused),
          connected.info('cluster').catch(unlessRefused),
          connected.info('server').catch(unlessRefused),
        ]);
        refuseUnsupported(replication, cluster, server);
        warnUnlessNoEviction(memory, logger);
        layout = await layoutRead;
      },
    },
  );
  // After the start's 10 s: an upgrade from the oldest versions may have many records to move.
  if (layout !== CURRENT_LAYOUT) {
    // Each command within the bot's deadline: a Redis that stops answering mid-move stops the start.
    const bounded = withDeadlines(client, COMMAND_TIMEOUT_MS);
    await moveDoubledKeys(bounded, namespace, logger, options.retentionMs).catch(async (error: unknown) => {
      client.destroy();
      throw new StoreUnavailableError(redisUrl, error);
    });
  }
  // One namespace in every key: `<namespace>:<key>`, as the atomic operations and BullMQ write theirs.
  const adapter = new KeyvRedis(client, { namespace, keyPrefixSeparator: ':', throwOnErrors: true });
  const kv = new Keyv({
    store: withDeadlines(adapter, COMMAND_TIMEOUT_MS, options.onCommandError),
    namespace,
    useKeyPrefix: false,
    throwOnErrors: true,
  });
  kv.on('error', () => {}); // reported by the client's own 'error' listener above
  // Keyv's own key function, so compare-and-set hits the very key kv.get reads.
  const recordKey = (key: string) => adapter.createKeyPrefix(key, adapter.namespace);
  return {
    kind: 'redis',
    kv,
    atomic: withDeadlines(
      new RedisAtomicOps(client, namespace, recordKey),
      COMMAND_TIMEOUT_MS,
      options.onCommandError,
    ),
    redis: client,
    close: () => quit(client),
  };
}
