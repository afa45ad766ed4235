import KeyvRedis, { createClient, type RedisClientOptions, type RedisClientType } from '@keyv/redis';
import type { Logger } from '@slack/bolt';
import { Keyv } from 'keyv';
import type { StoreSettings } from '../config.js';
import { withoutCredentials } from '../log.js';
import { withDeadlines } from './deadline.js';
import { RedisAtomicOps } from './redisAtomic.js';
import type { Store } from './store.js';
import { isErrorReply, isRequestLimitReply, REQUEST_LIMIT } from './storeErrors.js';

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
/** Marks a namespace whose keys use the one-namespace layout (see `moveDoubledKeys`). */
const LAYOUT_KEY = 'store-layout';
const LAYOUT = '2';

/** Node's codes for a certificate that nothing the process trusts vouches for. */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);
/** A certificate that is trusted but wrong for this server, or out of date. */
const UNACCEPTABLE_CERTIFICATE = new Set([
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
]);

/**
 * A Redis the bot cannot work with, told at start by what it says of itself (INFO): its message
 * is the whole of what is wrong, and what to do.
 */
class UnsupportedRedisError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'UnsupportedRedisError';
  }
}

export class StoreUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`Redis at ${withoutCredentials(url, 'REDIS_URL')} ${problemOf(cause, url)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/** Why the bot could not use Redis, in plain words, and what to do about it. */
function problemOf(cause: unknown, url: string): string {
  if (cause instanceof UnsupportedRedisError) return cause.message;
  // The Redis client decodes the URL's user name and password; a lone % cannot be.
  if (cause instanceof URIError) {
    return (
      `cannot be connected to: the user name or password in REDIS_URL cannot be decoded (${cause.message}). ` +
      'Percent-encode a % in it as %25 (and # / @ : as %23 %2F %40 %3A)'
    );
  }
  const code = errorCode(cause);
  const reason = cause instanceof Error ? cause.message : String(cause);
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) {
    return (
      `presented a TLS certificate that this machine does not trust (${reason}). Set REDIS_TLS_CA to your ` +
      "provider's CA certificate (PEM text, or the path of a PEM file), or REDIS_TLS_REJECT_UNAUTHORIZED=false " +
      'to accept it without checking (Heroku Redis and Heroku Key-Value Store need this)'
    );
  }
  if (typeof code === 'string' && UNACCEPTABLE_CERTIFICATE.has(code)) {
    return (
      `presented a TLS certificate that does not fit (${reason}). Check the host name in REDIS_URL; ` +
      'REDIS_TLS_REJECT_UNAUTHORIZED=false accepts any certificate'
    );
  }
  const refusal = redisRefusal(reason);
  if (refusal) return `${refusal} (${reason})`;
  // Its reply quotes the password: not repeated.
  if (/^ERR AUTH\b.*without any password configured/.test(reason)) {
    return 'has no password set, but REDIS_URL gives one: remove the password from REDIS_URL (or set one on Redis)';
  }
  if (/^ERR DB index is out of range/.test(reason)) {
    return (
      `has no database ${databaseOf(url)} (${reason}): the number after the / in REDIS_URL must be below ` +
      'its "databases" setting (hosted plans often have only 0)'
    );
  }
  // An error reply (ERR ..., WRONGTYPE ...): Redis answered, and refused.
  if (/^[A-Z][A-Z_]+ /.test(reason))
    return `answered with an error (${reason}): check REDIS_URL and its settings`;
  // A hint at the other scheme, for the two ways a TLS mismatch shows.
  const tls = url.startsWith('rediss:')
    ? /^no answer within/.test(reason)
      ? ' With rediss://, a Redis without TLS never answers the handshake: use redis:// if it has no TLS.'
      : ''
    : /socket closed unexpectedly/i.test(reason)
      ? ' A Redis that requires TLS (most hosted plans) closes a plain connection: use a rediss:// URL (two s).'
      : '';
  return (
    `did not answer (${reason}). Check REDIS_URL and that Redis is running.${tls} The bot does not fall back to ` +
    'memory when REDIS_URL is set (leave it unset only to try the bot, which then forgets every job on restart)'
  );
}

/** The database number of a Redis URL (its path), 0 when it has none. */
function databaseOf(url: string): string {
  try {
    return new URL(url).pathname.replace(/^\//, '') || '0';
  } catch {
    return '?';
  }
}

/** What Redis's own error reply at start means for the operator; undefined for any other failure. */
function redisRefusal(reason: string): string | undefined {
  if (/^(WRONGPASS|NOAUTH)\b/.test(reason)) {
    return (
      'refused the password (or user name) in REDIS_URL. Check them, and percent-encode characters ' +
      'such as # / @ : in the password (# is %23)'
    );
  }
  if (/^NOPERM\b/.test(reason)) {
    return (
      "refused a command to REDIS_URL's user. The bot and BullMQ need its data, scripting and INFO " +
      'commands: give that ACL user +@all, or at least +@all -@dangerous +info'
    );
  }
  if (/^READONLY\b/.test(reason)) return 'is a read-only replica: point REDIS_URL at the primary';
  if (/max number of clients/i.test(reason)) {
    return (
      "refused the connection: it has as many clients as it takes (maxclients, or the plan's connection " +
      'limit). A process with the worker role opens 7 connections, one with only the web role 1'
    );
  }
  if (/^OOM\b/.test(reason)) {
    return 'is full (maxmemory) and refuses writes: give it more memory, or look at what fills it';
  }
  if (/^LOADING\b/.test(reason))
    return 'is still loading its data after a restart: start the bot again shortly';
  if (isRequestLimitReply(reason)) return REQUEST_LIMIT;
  return undefined;
}

/** The first `code` along the error's causes (node-redis wraps the socket's error as `socketError`). */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, socketError, cause } = current as {
      code?: unknown;
      socketError?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string') return code;
    current = socketError ?? cause;
  }
  return undefined;
}

const isCertificateProblem = (error: unknown) => {
  const code = errorCode(error);
  return code !== undefined && (UNTRUSTED_CERTIFICATE.has(code) || UNACCEPTABLE_CERTIFICATE.has(code));
};

/** The URL without its user and password, fit for a log line. */

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
  events: { onDown?: (error: Error) => void; onUp?: () => void },
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
    throw new StoreUnavailableError(settings.redisUrl, error);
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
}): Promise<Store> {
  const { logger, namespace, url: redisUrl } = options;
  const settings = { redisUrl, namespace, tls: options.tls ?? { rejectUnauthorized: true, ca: undefined } };
  if (redisUrl.startsWith('rediss://') && !settings.tls.rejectUnauthorized) {
    logger.warn(
      "REDIS_TLS_REJECT_UNAUTHORIZED=false: Redis's TLS certificate is not checked (the connection is encrypted, " +
        'but anyone on the path could pose as your Redis); set REDIS_TLS_CA instead if your provider publishes its CA',
    );
  }
  let layout: string | null = LAYOUT;
  const client = await connectRedis(
    settings,
    {
      onDown: (error) => logger.error(`Redis is unreachable (${error.message}); retrying in the background`),
      onUp: () => logger.info('Redis is reachable again'),
    },
    {
      timeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
      // Asked at once: one round trip to a hosted Redis rather than several, before the bot can listen.
      // Nothing is written before the Redis is known to be one the bot can work with.
      prepare: async (connected) => {
        const layoutRead = connected.get(`${namespace}:${LAYOUT_KEY}`);
        layoutRead.catch(() => {}); // a Redis refused below answers it with an error nobody waits for
        // A provider that refuses a section of INFO it keeps to itself leaves that check be; INFO
        // itself refused (an ACL user without it) stops the start, through `memory`.
        const unlessRefused = (error: unknown) => {
          if (isErrorReply(error)) return '';
          throw error;
        };
        const [memory, replication, cluster] = await Promise.all([
          connected.info('memory'),
          connected.info('replication').catch(unlessRefused),
          connected.info('cluster').catch(unlessRefused),
        ]);
        refuseUnsupported(replication, cluster);
        warnUnlessNoEviction(memory, logger);
        layout = await layoutRead;
      },
    },
  );
  // After the start's 10 s: an upgrade from the oldest versions may have many records to move.
  if (layout !== LAYOUT) {
    await moveDoubledKeys(client, namespace, logger, options.retentionMs).catch(async (error: unknown) => {
      client.destroy();
      throw new StoreUnavailableError(redisUrl, error);
    });
  }
  // One namespace in every key: `<namespace>:<key>`, as the atomic operations and BullMQ write theirs.
  const adapter = new KeyvRedis(client, { namespace, keyPrefixSeparator: ':', throwOnErrors: true });
  const kv = new Keyv({
    store: withDeadlines(adapter, COMMAND_TIMEOUT_MS),
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
    atomic: withDeadlines(new RedisAtomicOps(client, namespace, recordKey), COMMAND_TIMEOUT_MS),
    redis: client,
    close: () => quit(client),
  };
}

/**
 * A read-only replica (a reader endpoint) takes the start's reads, then refuses every write; a
 * Redis Cluster node answers only for its own keys, and the bot's and BullMQ's commands span keys
 * of many slots. Read from INFO; a Redis that hides a section is left be.
 */
function refuseUnsupported(replication: string, cluster: string): void {
  const role = /^role:(\S+)/m.exec(replication)?.[1];
  if (role === 'slave' || role === 'replica') {
    throw new UnsupportedRedisError(
      'is a read-only replica: REDIS_URL points at a replica (a reader endpoint?), where every write of the bot ' +
        'would be refused. Point REDIS_URL at the primary (on ElastiCache, the primary endpoint)',
    );
  }
  if (/^cluster_enabled:1\b/m.test(cluster)) {
    throw new UnsupportedRedisError(
      'runs Redis Cluster (cluster mode), which the bot does not support (ElastiCache with cluster mode on, ' +
        'ElastiCache Serverless and MemoryDB run it): use a Redis without cluster mode, by its primary endpoint',
    );
  }
}

/**
 * BullMQ needs `maxmemory-policy noeviction`: a Redis that evicts keys when full may drop queued
 * work. Read from INFO (CONFIG is disabled on most hosted Redis); a Redis that hides it is left be.
 */
function warnUnlessNoEviction(info: string, logger: Logger): void {
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return;
  logger.warn(
    `Redis's maxmemory-policy is ${policy}: when its memory is full it deletes keys, queued work and job ` +
      'records among them. Set it to noeviction (on Heroku: heroku redis:maxmemory --policy noeviction; on ' +
      'ElastiCache, whose default is volatile-lru: in a custom parameter group), so a full Redis refuses writes ' +
      'instead, which the bot reports',
  );
}

/**
 * Records written before the one-namespace layout sit under `<namespace>::<namespace>:<key>`:
 * moved once to `<namespace>:<key>` (a key already there is newer, and wins), so an upgrade keeps
 * following its jobs and steering their threads.
 */
async function moveDoubledKeys(
  unbounded: RedisClientType,
  namespace: string,
  logger: Logger,
  retentionMs: number | undefined,
): Promise<void> {
  // Each command within the bot's deadline: a Redis that stops answering mid-move stops the start.
  const client = withDeadlines(unbounded, COMMAND_TIMEOUT_MS);
  const layoutKey = `${namespace}:${LAYOUT_KEY}`;
  const oldPrefix = `${namespace}::${namespace}:`;
  let moved = 0;
  const moveOne = async (key: string) => {
    const target = `${namespace}:${key.slice(oldPrefix.length)}`;
    let renamed: boolean;
    try {
      renamed = Boolean(await client.renameNX(key, target));
    } catch (error) {
      // Another process starting at the same time moved it first.
      if (String(error).includes('no such key')) return;
      throw error;
    }
    if (!renamed) {
      await client.del(key);
      return;
    }
    moved += 1;
    // Written before keys expired: from now on they do, as the bot's own writes would make them.
    if (retentionMs !== undefined && (await client.pTTL(target)) === -1)
      await client.pExpire(target, retentionMs);
  };
  let cursor = '0';
  do {
    const page = await client.scan(cursor, { MATCH: `${globEscape(oldPrefix)}*`, COUNT: 1_000 });
    cursor = String(page.cursor);
    // A page at a time, its keys together: the client sends their commands in one go, so a hosted
    // Redis far away takes a few round trips a page, not a few a key.
    const before = moved;
    await Promise.all(page.keys.map(moveOne));
    if (Math.floor(moved / 10_000) > Math.floor(before / 10_000)) {
      logger.info(`moving stored records to the current key layout: ${moved} so far`);
    }
  } while (cursor !== '0');
  await client.set(layoutKey, LAYOUT);
  if (moved > 0) logger.info(`moved ${moved} stored record(s) to keys named ${namespace}:<key>`);
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
