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

/**
 * Each process with a Redis store says which Slack app it serves (its bot, from auth.test), every
 * half minute. Two deployments (production and staging, a developer's app) on one Redis with the
 * same STORE_NAMESPACE share its queues and records: each would take the other's requests and
 * answer them with its own token and Mintlify project. A process that finds another app's
 * processes alive in its namespace says so, plainly, once per app. It does not refuse to start:
 * a deployment moved to a new Slack app sees the old app's processes until they stop, and a rolling
 * deploy whose new processes refused to start beside the old ones would never finish.
 */
const APP_ALIVE_KEY = 'app-alive';
/** The bots said alive lately, for a process to find another app's among them. */
const APPS_KEY = 'apps-alive';
const APPS_KEPT = 20;
const APPS_KEPT_MS = 24 * 3_600_000;

export interface ServedApp {
  botId: string;
  /** Learnt shortly after the start: named in the log once known. */
  appId?: string;
}

const appName = (app: ServedApp) => `bot ${app.botId}${app.appId ? `, app ${app.appId}` : ''}`;

const GIVE_EACH_ITS_OWN =
  'Give each deployment (production, staging, a developer’s app) its own STORE_NAMESPACE, or a Redis of its own';

export function announceApp(
  store: Store,
  served: ServedApp,
  namespace: string,
  logger: Logger,
): { stop(): Promise<void> } {
  const said = new Set<string>();
  const announce = async () => {
    await store.kv.set(`${APP_ALIVE_KEY}:${served.botId}`, served.appId ?? '', ALIVE_FOR_MS);
    await store.atomic.indexAdd(APPS_KEY, served.botId, Date.now(), APPS_KEPT, APPS_KEPT_MS);
    for (const botId of await store.atomic.indexNewest(APPS_KEY, APPS_KEPT)) {
      if (botId === served.botId || said.has(botId)) continue;
      const appId: string | undefined = await store.kv.get(`${APP_ALIVE_KEY}:${botId}`);
      if (appId === undefined) continue; // not said alive lately
      said.add(botId);
      // The same app installed in another workspace has a bot of its own there.
      const other =
        appId !== '' && appId === served.appId
          ? `a deployment of this Slack app for another workspace (${appName({ botId, appId })})`
          : `another Slack app's deployment (${appName({ botId, appId })})`;
      logger.error(
        `${other} runs on this Redis with the same ` +
          `STORE_NAMESPACE (${namespace}) as this one (${appName(served)}): the two share their queues and job records ` +
          `(each may take the other's requests and jobs, and answer them with its own token and Mintlify project). ${GIVE_EACH_ITS_OWN}. ` +
          `(Moving a deployment to a new Slack app, the old app's processes are seen until they stop.)`,
      );
    }
  };
  const look = () => void announce().catch(() => {}); // Redis away: said elsewhere
  look();
  const timer = setInterval(look, ANNOUNCE_EVERY_MS);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
}
