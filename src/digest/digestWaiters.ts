import type { Logger } from '@slack/bolt';
import { respondVia } from '../slack/respond.js';
import type { AtomicOps } from '../store/atomic.js';
import { readIndexMember } from '../store/indexMember.js';
import { leaseHolderIs } from '../store/lease.js';

/**
 * The people told that their channel's digest "will appear here shortly" (a `/docs-agent digest`
 * asked while another one for the channel was being prepared), kept until the run preparing it
 * ends: when it ends without a digest in the channel, they hear why, through their own response URL.
 *
 * Kept in the store, so that the run that ends finds them in whichever process it runs, or run again
 * after a crash; each person under one run is answered once, by that run or by their own request
 * (see `waitForDigest`). Once rather than at least once: whichever claims a person
 * (`digest-waiting-answered`) and crashes before its answer is posted leaves that person untold,
 * where answering again after a crash could tell them twice. Their response URL lets anyone post in
 * the channel for 30 minutes: it is never logged.
 */

/** Who asked: the request's queue job id, and the response URL that answers them. */
export interface DigestWaiter {
  id: string;
  responseUrl: string;
}

interface WaitingEntry {
  /** The lease token of the run they were promised (see `waitForDigest`). */
  token: string;
  id: string;
  url: string;
  /** When they were told (ms): a response URL works for 30 minutes. */
  at: number;
}

// Slack's response URL works for 30 minutes: past that, nobody can be told anything through it.
const WAITING_KEEP_MS = 30 * 60_000;

// Not under `digest:`, which is the BullMQ digest queue's prefix.
const waitingKey = (channel: string) => `digest-waiting:${channel}`;
/** Held by whichever answers the person waiting on that run: the run's end, or their own request. */
const answeredKey = (id: string, token: string) => `digest-waiting-answered:${id}:${token}`;
/** Held once the person who asked (`id`, their request's queue job) is told the digest is on its way. */
const promisedKey = (id: string) => `digest-waiting-promised:${id}`;

/**
 * Whether to tell the person who asked (`id`, their request's queue job) that the channel's digest
 * is on its way: true the first time only, whichever run of their request asks. Marked before they
 * are told, so that their request run again (Redis failed as they were noted among those waiting)
 * does not tell them twice; a crash between the mark and the telling leaves them untold.
 */
export function firstPromise(atomic: AtomicOps, id: string): Promise<boolean> {
  return atomic.setIfAbsent(promisedKey(id), 'told', WAITING_KEEP_MS);
}

/**
 * Noted as waiting for the run that holds `leaseKey` now. `promise` tells the person it is on its
 * way (once per request: see `firstPromise`), before they are noted, so that nothing that run says
 * reaches them before it. True when that
 * run (or the one after it) answers them at its end; false when it ended before it could see them:
 * the request then takes its own turn, nobody else having promised them anything.
 */
export async function waitForDigest(
  atomic: AtomicOps,
  leaseKey: string,
  channel: string,
  waiter: DigestWaiter,
  promise: () => Promise<void>,
): Promise<boolean> {
  const token = await atomic.holder(leaseKey);
  // Not noted as waiting on a run of their own request (one that died, run again now): it never answers.
  if (token === undefined || leaseHolderIs(token, waiter.id)) return false;
  await promise();
  const at = Date.now();
  const entry: WaitingEntry = { token, id: waiter.id, url: waiter.responseUrl, at };
  const member = JSON.stringify(entry);
  await atomic.indexAdd(waitingKey(channel), member, at, undefined, WAITING_KEEP_MS);
  // Still held by that run: it reads its waiters after it lets go of the lease, so it finds this one.
  if ((await atomic.holder(leaseKey)) === token) return true;
  // It ended meanwhile, and may have read this one among its waiters: whichever claims it answers.
  if (!(await atomic.setIfAbsent(answeredKey(waiter.id, token), 'own', WAITING_KEEP_MS))) return true;
  await atomic.indexRemove(waitingKey(channel), member);
  return false;
}

/**
 * At the end of a run, once its lease on `leaseKey` is let go: answers with `text` everyone waiting
 * on a run no longer under way (this one, or one that died or lost its lease), once each; `text`
 * undefined (the digest is in the channel) answers them with nothing. Those promised by a run under
 * way now are left to it.
 */
export async function answerWaiting(
  atomic: AtomicOps,
  leaseKey: string,
  channel: string,
  text: string | undefined,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const members = await atomic.indexAll(waitingKey(channel));
  if (members.length === 0) return;
  const current = await atomic.holder(leaseKey);
  await Promise.all(
    members.map(async (member) => {
      const entry = readEntry(member);
      // Promised by the run under way now: that run answers them. One that cannot be read is cleared.
      if (entry !== undefined && entry.token === current) return;
      if (entry && (await atomic.setIfAbsent(answeredKey(entry.id, entry.token), 'run', WAITING_KEEP_MS))) {
        if (text !== undefined && Date.now() - entry.at < WAITING_KEEP_MS) {
          await respondVia(entry.url)({ response_type: 'ephemeral', text }).catch((error: unknown) =>
            // The URL stays out of the log: with it, anyone could post in the channel.
            logger.warn(
              `could not tell a person waiting for the digest in ${channel} that it will not come: ${String(error)}`,
            ),
          );
        }
      }
      await atomic.indexRemove(waitingKey(channel), member);
    }),
  );
}

function readEntry(member: string): WaitingEntry | undefined {
  return readIndexMember<WaitingEntry>(member, {
    token: 'string',
    id: 'string',
    url: 'string',
    at: 'number',
  });
}
