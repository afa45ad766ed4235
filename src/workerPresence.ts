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

export function announceWorker(store: Store): { stop(): void } {
  const announce = () => void store.kv.set(ALIVE_KEY, Date.now(), ALIVE_FOR_MS).catch(() => {});
  announce();
  const timer = setInterval(announce, ANNOUNCE_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

export function watchForWorkers(
  store: Store,
  requests: WorkQueue<unknown>,
  logger: Logger,
  everyMs = 60_000,
): { stop(): void } {
  let said = false;
  const look = async () => {
    const [alive, { waiting }] = await Promise.all([store.kv.get(ALIVE_KEY), requests.counts()]);
    if (alive === undefined && waiting > 0 && !said) {
      said = true;
      logger.error(
        `${waiting} Slack request(s) wait in the queue, and no process with the worker role has run on this Redis ` +
          'and STORE_NAMESPACE lately: nobody is answered until one does. Run a process with SERVICES=worker ' +
          '(or the default, web,worker) with the same REDIS_URL and STORE_NAMESPACE',
      );
    } else if (alive !== undefined && said) {
      said = false;
      logger.info(
        'a process with the worker role runs on this Redis again: the queued requests are worked off',
      );
    }
  };
  const timer = setInterval(() => void look().catch(() => {}), everyMs); // Redis away: said elsewhere
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
