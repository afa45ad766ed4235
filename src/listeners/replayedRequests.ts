import type { IncomingMessage } from 'node:http';
import type { App } from '@slack/bolt';
import type { AtomicOps } from '../store/atomic.js';
import { firstSighting } from '../store/dedupe.js';

/**
 * Bolt refuses a request signed more than 5 minutes ago, but within those minutes an exact copy
 * of a signed request (a replay, a proxy that sends twice) passes its check. The signature covers
 * the timestamp and the whole body, so a copy has the same one: the copy is acknowledged and
 * dropped. Slack's own retries are new requests, with new timestamps; the doors dedupe those.
 */

// Longer than the 5 minutes during which Bolt accepts a signature.
const REPLAY_WINDOW_MS = 10 * 60_000;
// The check runs before the doors acknowledge, within Slack's 3 s: a store that hangs is not waited on.
const CHECK_WITHIN_MS = 500;

/** For the HTTP receiver's `customPropertiesExtractor`: the signature, for the middleware below. */
export function requestSignature(request: IncomingMessage): { requestSignature?: string } {
  const signature = request.headers['x-slack-signature'];
  return typeof signature === 'string' ? { requestSignature: signature } : {};
}

/** `atomic` is the acknowledging thread's own connection to the store (see `openAckPathAtomic`). */
export function register(app: App, atomic: AtomicOps): void {
  app.use(async ({ context, next, logger, ...args }) => {
    const signature = context.requestSignature;
    if (typeof signature === 'string') {
      // The store away or slow: let the request through; the doors answer "try again shortly" on their own.
      let timer: NodeJS.Timeout | undefined;
      const first = await Promise.race([
        firstSighting(atomic, `request:${signature}`, REPLAY_WINDOW_MS).catch(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(resolve, CHECK_WITHIN_MS, true);
        }),
      ]).finally(() => clearTimeout(timer));
      if (!first) {
        logger.warn('dropped a replayed Slack request (same signature as one already handled)');
        const ack = (args as { ack?: () => Promise<void> }).ack;
        if (ack) await ack();
        return;
      }
    }
    await next();
  });
}
