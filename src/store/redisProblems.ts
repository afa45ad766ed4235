/**
 * What can be wrong with the Redis an operator points the bot at, in plain words with what to do:
 * a connection that fails at start, a certificate, a refusal, a Redis the bot cannot work with.
 */
import { connect } from 'node:net';
import type { Logger } from '@slack/bolt';
import { withoutCredentials } from '../log.js';
import { AS_MANY_CLIENTS, isRequestLimitReply, REQUEST_LIMIT } from './storeErrors.js';

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
export class UnsupportedRedisError extends Error {
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

/** How long a plain connection waits for what Redis says unasked (see `withGreeting`). */
const GREETING_WAIT_MS = 1_000;

/**
 * The connection's failure at start, with what Redis says unasked to a plain connection when that
 * is an error reply. A Redis at its maxclients answers "ERR max number of clients reached" and
 * closes, before any command: the Redis client then reports only "Socket closed unexpectedly"
 * (no password) or "read ECONNRESET", as for a Redis that requires TLS and closes a plain
 * connection. A Redis that takes the connection, or wants TLS, says nothing: the failure stays.
 */
export async function withGreeting(url: string, failure: unknown): Promise<unknown> {
  const reason = failure instanceof Error ? failure.message : String(failure);
  if (!/socket closed unexpectedly|ECONNRESET|EPIPE/i.test(reason)) return failure;
  let address: URL;
  try {
    address = new URL(url);
  } catch {
    return failure;
  }
  if (address.protocol !== 'redis:') return failure;
  // Not said (the connection could not be opened at all): the failure stays as it was.
  const greeting = await new Promise<string>((resolve) => {
    const socket = connect(Number(address.port || 6379), address.hostname.replace(/^\[|\]$/g, ''));
    let said = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(said);
    };
    const timer = setTimeout(done, GREETING_WAIT_MS);
    socket.on('data', (chunk) => {
      said += String(chunk);
      if (said.includes('\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
  }).catch(() => '');
  const reply = /^-([^\r\n]+)/.exec(greeting)?.[1];
  return reply ? new Error(reply, { cause: failure }) : failure;
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
      : // Over TLS a Redis that takes no more clients closes the connection before the handshake, unable to say why.
        /before secure TLS connection was established|socket closed unexpectedly|ECONNRESET|EPIPE/i.test(
            reason,
          )
        ? ` Over TLS this is also how a Redis that takes no more clients closes a connection: ${AS_MANY_CLIENTS}.`
        : ''
    : // Closed before the reply (the password's AUTH is the first thing sent), or reset while sending it.
      /socket closed unexpectedly|ECONNRESET|EPIPE/i.test(reason)
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
  // REDIS_URL without a password, for a Redis that wants one (only the host and port were copied).
  if (/^NOAUTH\b/.test(reason)) {
    return (
      'wants a password, and REDIS_URL gives none: write it as redis://:<password>@host:port (rediss:// for TLS) ' +
      "(your provider's URL has it), percent-encoding characters such as # / @ : (# is %23)"
    );
  }
  if (/^WRONGPASS\b/.test(reason)) {
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
    return `refused the connection: ${AS_MANY_CLIENTS}`;
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

export const isCertificateProblem = (error: unknown) => {
  const code = errorCode(error);
  return code !== undefined && (UNTRUSTED_CERTIFICATE.has(code) || UNACCEPTABLE_CERTIFICATE.has(code));
};

/**
 * A read-only replica (a reader endpoint) takes the start's reads, then refuses every write; a
 * Redis Cluster node answers only for its own keys, and the bot's and BullMQ's commands span keys
 * of many slots; BullMQ's queues need Redis 5 or later (Valkey says it is 7.2). Read from INFO; a
 * Redis that hides a section is left be.
 */
export function refuseUnsupported(replication: string, cluster: string, server: string): void {
  const version = /^redis_version:((\d+)\.\S*)/m.exec(server);
  if (version && Number(version[2]) < 5) {
    throw new UnsupportedRedisError(
      `is Redis ${version[1]}, older than BullMQ's queues take: use Redis 6.2 or later (5.0 at the very least)`,
    );
  }
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
export function warnUnlessNoEviction(info: string, logger: Logger): void {
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return;
  logger.warn(
    `Redis's maxmemory-policy is ${policy}: when its memory is full it deletes keys, queued work and job ` +
      'records among them. Set it to noeviction (on Heroku: heroku redis:maxmemory --policy noeviction; on ' +
      'ElastiCache, whose default is volatile-lru: in a custom parameter group), so a full Redis refuses writes ' +
      'instead, which the bot reports',
  );
}
