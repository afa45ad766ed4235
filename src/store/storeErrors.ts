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
  // a start under way in another run of it; a message in a thread whose job is starting. Each is
  // answered by the request's run again.
  'UnrecordedJobError',
  'StartElsewhereError',
  'ThreadStartingError',
]);

/** True when `error` (or an error it was caused by) says Redis is away or did not answer in time. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    // Mintlify's client has a TimeoutError of its own: a service's failure, not Redis away.
    if (isMintlifyError(current)) return false;
    if (UNAVAILABLE.has(current.constructor.name)) return true;
    current = current.cause;
  }
  return false;
}
