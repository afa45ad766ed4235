import type { IncomingMessage } from 'node:http';
import type { AtomicOps } from '../store/atomic.js';
import { firstSighting } from '../store/dedupe.js';

/**
 * Bolt refuses a request signed more than 5 minutes ago, but within those minutes an exact copy
 * of a signed request (a replay, a proxy that sends twice) passes its check. The signature covers
 * the timestamp and the whole body, so a copy has the same one: the copy is dropped. Slack's own
 * retries are new requests, with new timestamps; the doors dedupe those.
 *
 * The check is made after the ack, by the work, so the ack never waits on Redis: a copy is
 * acknowledged as the original was (the answer goes to whoever sent the copy, not to Slack), and
 * then nothing is done for it. The shortcut's form, opened by the front door, is not checked: a
 * copy would only find its trigger expired.
 */

// Longer than the 5 minutes during which Bolt accepts a signature.
const REPLAY_WINDOW_MS = 10 * 60_000;

/** For the HTTP receiver's `customPropertiesExtractor`: the signature, handed on with the request. */
export function requestSignature(request: IncomingMessage): { requestSignature?: string } {
  const signature = request.headers['x-slack-signature'];
  return typeof signature === 'string' ? { requestSignature: signature } : {};
}

/**
 * True when a request with this signature was seen before, by any instance. The store away:
 * false, and the request goes on (the doors answer "try again shortly" on their own).
 */
export async function isReplay(atomic: AtomicOps, signature: string | undefined): Promise<boolean> {
  if (signature === undefined) return false; // Socket Mode: no signature, and no replay over the socket
  return !(await firstSighting(atomic, `request:${signature}`, REPLAY_WINDOW_MS).catch(() => true));
}
