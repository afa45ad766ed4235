import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { WorkQueue } from './queue/queue.js';
import type { Store } from './store/store.js';

/**
 * A process with the worker role says so on the store, every half minute. A process with the web
 * role alone looks: Slack requests waiting while no worker has said so lately means none runs on
 * this Redis and STORE_NAMESPACE (a worker process not started, or started on another namespace),
 * and every person is told "its card will appear here" in vain. Said once, plainly.
 */
const ALIVE_KEY = 'worker-alive';
const ANNOUNCE_EVERY_MS = 30_000;
/** Three announcements missed: a worker restarting (a deploy) is not taken for none. */
const ALIVE_FOR_MS = 3 * ANNOUNCE_EVERY_MS;
/** Which web process has said that none runs, so that the others do not say it too. */
const SAID_KEY = 'worker-missing-said';
/** The claim's shortest life: renewed at every look, so it lapses only when its holder is gone. */
const MIN_CLAIM_MS = 30_000;

export function announceWorker(store: Store): { stop(): Promise<void> } {
  const announce = () => void store.kv.set(ALIVE_KEY, Date.now(), ALIVE_FOR_MS).catch(() => {});
  announce();
  const timer = setInterval(announce, ANNOUNCE_EVERY_MS);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
}

export function watchForWorkers(
  store: Store,
  requests: WorkQueue<unknown>,
  logger: Logger,
  everyMs = 60_000,
): { stop(): Promise<void> } {
  // Said by one web process of many: the first to find it claims the saying, and holds the claim
  // while the outage lasts (renewed at each look, so one that stops or dies lets another say it).
  // Only the one that said it says when a worker is back.
  const token = randomUUID();
  const claimFor = Math.max(3 * everyMs, MIN_CLAIM_MS);
  let said = false;
  const look = async () => {
    const [alive, { waiting }] = await Promise.all([store.kv.get(ALIVE_KEY), requests.counts()]);
    if (alive === undefined) {
      // Still ours (it lapses only if this process stalled, or Redis was away, past its life):
      // whoever holds it now is the one to say when a worker is back.
      if (said) {
        said = await store.atomic.extendIfValue(SAID_KEY, token, claimFor);
        return;
      }
      if (waiting === 0 || !(await store.atomic.setIfAbsent(SAID_KEY, token, claimFor))) return;
      said = true;
      logger.error(
        `${waiting} Slack request(s) wait in the queue, and no process with the worker role has run on this Redis ` +
          'and STORE_NAMESPACE lately: nobody is answered until one does. Run a process with SERVICES=worker ' +
          '(or the default, web,worker) with the same REDIS_URL and STORE_NAMESPACE',
      );
    } else if (alive !== undefined && said) {
      said = false;
      await store.atomic.deleteIfValue(SAID_KEY, token);
      logger.info(
        'a process with the worker role runs on this Redis again: the queued requests are worked off',
      );
    }
  };
  const timer = setInterval(() => void look().catch(() => {}), everyMs); // Redis away: said elsewhere
  timer.unref();
  return {
    // Its claim let go, so that another web process may say it while the outage lasts.
    stop: async () => {
      clearInterval(timer);
      if (said) await store.atomic.deleteIfValue(SAID_KEY, token).catch(() => {});
    },
  };
}
