import { isMintlifyError } from '../mintlify/index.js';

/**
 * The Redis client's errors for a Redis that is away or hangs (node-redis names none of them, so
 * they are told by their class). Work that meets one waits for Redis and is tried again; it is
 * never answered "something went wrong", which would send the person to do it twice.
 */
const UNAVAILABLE = new Set([
  'StoreTimeoutError',
  'TimeoutError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError',
  'CommandTimeoutDuringMaintenanceError',
  'SocketTimeoutDuringMaintenanceError',
  // Ours: a job created while Redis was away, whose record this process writes once Redis answers;
  // a start under way in another run of it; a message in a thread whose job is starting; an edit of
  // a message whose start is under way, or of a reply being sent to its job. Each is answered by the
  // request's run again.
  'UnrecordedJobError',
  'StartElsewhereError',
  'ThreadStartingError',
  'EditWaitsError',
  'ReplyEditWaitsError',
]);

/**
 * Redis's own error replies for a Redis that cannot take the command for now: full (`OOM`, with
 * `maxmemory-policy noeviction`), a replica during a failover (`READONLY`), loading its data after
 * a restart, refusing writes after a failed snapshot (`MISCONF`), busy with a script. Waited out
 * like a Redis away: answered "something went wrong", a job Mintlify created would be lost and
 * its person sent to start it twice.
 */
const PASSING_REPLY = /^(OOM|READONLY|LOADING|MISCONF|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|BUSY)\b/;
const REPLY_ERRORS = new Set(['ErrorReply', 'SimpleError', 'BlobError']);

/** An error reply of Redis's own (node-redis names its kinds ErrorReply, SimpleError, BlobError). */
export function isErrorReply(error: unknown): error is Error {
  return error instanceof Error && REPLY_ERRORS.has(error.constructor.name);
}

/**
 * Upstash's reply once a plan's command allowance is spent (the free plan's, or a pay-as-you-go
 * budget's): passing too, until the allowance renews or the plan changes.
 */
export function isRequestLimitReply(message: string): boolean {
  return /^ERR max (?:daily )?requests? limit exceeded/i.test(message);
}

/** Redis's reply to a connection beyond its maxclients ("ERR max number of clients reached"), in plain words. */
export const AS_MANY_CLIENTS =
  "it has as many clients as it takes (maxclients, or the plan's connection limit). A process with the worker " +
  'role opens 7 connections (6 without a weekly digest), one with only the web role 1';

/** What that reply means, in plain words. */
export const REQUEST_LIMIT =
  "refuses commands: its plan's allowance of commands is used up (Upstash: ERR max requests limit exceeded). " +
  "BullMQ's workers send commands even when idle: take a fixed plan, not a pay-as-you-go or free one";

/** The passing error reply `error` is, or one of a transaction's replies it holds, if there is one. */
function passingReply(error: Error): string | undefined {
  const { replies: multi } = error as { replies?: unknown };
  const replies =
    error.constructor.name === 'MultiErrorReply' && Array.isArray(multi)
      ? multi.filter((reply): reply is Error => reply instanceof Error)
      : [error];
  return replies.find(
    (reply) =>
      isErrorReply(reply) && (PASSING_REPLY.test(reply.message) || isRequestLimitReply(reply.message)),
  )?.message;
}

/** Why Redis could not take the work, in a few plain words for the log. */
export function storeTrouble(error: unknown): string {
  return redisRefusalOf(error) ?? 'Redis is away';
}

/** What a passing refusal of Redis's (full, a replica, out of commands) means, in plain words; undefined for any other error. */
export function redisRefusalOf(error: unknown): string | undefined {
  for (const current of causesOf(error)) {
    const refusal = isErrorReply(current) ? connectionRefusal(current.message) : undefined;
    if (refusal) return refusal;
    const reply = passingReply(current);
    if (reply?.startsWith('OOM')) return 'Redis is full (its maxmemory is reached, and it refuses writes)';
    if (reply?.startsWith('READONLY')) {
      return 'Redis answers as a read-only replica (during a failover; if it lasts, this process is still connected to the old primary)';
    }
    if (reply && isRequestLimitReply(reply)) return `Redis ${REQUEST_LIMIT}`;
    if (reply) return `Redis cannot take writes for now (${reply.split(' ')[0]})`;
  }
  return undefined;
}

/** Whether `error`, or an error it carries, is Redis's READONLY: a replica's refusal of a write. */
export function isReadOnlyReply(error: unknown): boolean {
  for (const current of causesOf(error)) {
    if (passingReply(current)?.startsWith('READONLY')) return true;
  }
  return false;
}

/** `error` and the errors it carries, a few deep (Bolt hands its error handler the listener's error as `original`). */
function* causesOf(error: unknown): Generator<Error> {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    yield current;
    current = current.cause ?? (current as { original?: unknown }).original;
  }
}

/**
 * Redis's refusal of a connection opened again while the bot ran: of REDIS_URL's credentials (the
 * password rotated, the ACL user disabled or removed), for which Redis stays away to the bot until
 * its REDIS_URL is changed, which nothing but the operator can do; or of one client more than its
 * maxclients (other processes hold every connection the plan allows).
 */
function connectionRefusal(message: string): string | undefined {
  if (/^ERR max number of clients reached/i.test(message)) {
    return (
      `Redis refuses the bot's connections as they open again: ${AS_MANY_CLIENTS}. ` +
      'Run fewer processes on this Redis, or raise its maxclients (take a plan with more connections). Work waits meanwhile'
    );
  }
  const kind = /^(WRONGPASS|NOAUTH)\b/.exec(message)?.[1];
  if (kind === undefined) return undefined;
  return (
    `Redis refuses the user name or password in REDIS_URL (${kind}): the password was changed, or the ACL user ` +
    'disabled, while the bot ran: set REDIS_URL to the new one and restart the bot. Work waits meanwhile'
  );
}

/** True when `error` (or an error it was caused by) says Redis is away, did not answer in time, or cannot take writes for now. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    // Mintlify's client has a TimeoutError of its own: a service's failure, not Redis away.
    if (isMintlifyError(current)) return false;
    if (UNAVAILABLE.has(current.constructor.name)) return true;
    if (passingReply(current) !== undefined) return true;
    current = current.cause;
  }
  return false;
}
