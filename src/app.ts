import { Worker } from 'node:worker_threads';
import type { Logger } from '@slack/bolt';
import type { Config } from './config.js';
import { type FrontDoor, openFrontDoor } from './frontDoor.js';
import type { JobFollower } from './jobs/followJobs.js';
import type { ListenerContext } from './listeners/context.js';
import type { Store } from './store/store.js';
import { createWork, type WorkOptions } from './work.js';
import type { FromWorkThread, ToWorkThread } from './workThread.js';

export interface DocsAgentOptions extends WorkOptions {
  /** Tests lower the backlog from which new commands are refused. */
  busyBacklog?: number;
}

/** The bot as its entry point sees it. */
export interface RunningDocsAgent {
  /** Starts the work, then takes Slack requests; resolves with the HTTP port (HTTP mode) once listening. */
  start(): Promise<{ port: number | undefined }>;
  /** Stops taking requests, lets in-flight work finish, then closes connections. */
  stop(): Promise<void>;
}

/** The bot on one thread, its parts in reach: what tests, the sandbox and the benchmarks drive. */
export interface DocsAgent extends RunningDocsAgent {
  readonly store: Store;
  readonly context: ListenerContext;
  readonly follower: JobFollower;
}

/** From the stop: longer than the work's own drain (8 s), within main.ts's 9.5 s; then the thread is ended anyway. */
const WORK_THREAD_STOP_MS = 9_000;

/**
 * The front door (acknowledges Slack) and the work (everything after the ack) on this thread.
 * Every request crosses the same boundary as in `createThreadedDocsAgent`, without the thread.
 */
export async function createDocsAgent(config: Config, options: DocsAgentOptions): Promise<DocsAgent> {
  const work = await createWork(config, options);
  let front: FrontDoor;
  try {
    front = await openFrontDoor(config, {
      logger: options.logger,
      forward: (request) => void work.handle(request),
      backlog: () => work.backlog,
      ...(options.busyBacklog ? { busyBacklog: options.busyBacklog } : {}),
      ...(options.slackRetries ? { slackRetries: options.slackRetries } : {}),
    });
  } catch (error) {
    await work.stop();
    throw error;
  }
  return {
    store: work.store,
    context: work.context,
    follower: work.follower,
    async start() {
      await work.start();
      return front.start();
    },
    async stop() {
      await front.stop();
      await work.stop();
    },
  };
}

/**
 * The bot as it runs in production: the front door on the main thread, the work on a worker
 * thread. A Slack request then waits only for the requests ahead of it to be acknowledged, never
 * for the jobs, Redis writes, Slack and Mintlify calls (and their garbage) that follow them.
 * `onFatal` hears of a work thread that died: the process should exit, so that it is restarted.
 */
export async function createThreadedDocsAgent(
  config: Config,
  options: { logger: Logger; onFatal: (error: Error) => void; busyBacklog?: number },
): Promise<RunningDocsAgent> {
  const { logger } = options;
  let worker: Worker | undefined;
  let stopping = false;
  // Requests handed to the work thread, and (shared with it, counted there) those it has finished.
  let forwarded = 0;
  const finished = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const send = (message: ToWorkThread) => worker?.postMessage(message);
  const front = await openFrontDoor(config, {
    logger,
    forward: (request) => {
      forwarded += 1;
      send({ type: 'request', request });
    },
    // Both counts wrap alike past 2^31, so their difference stays right.
    backlog: () => (forwarded - Atomics.load(finished, 0)) | 0,
    ...(options.busyBacklog ? { busyBacklog: options.busyBacklog } : {}),
  });

  const untilWorkThread = (wanted: FromWorkThread['type']) =>
    new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromWorkThread) => {
        if (message.type === wanted) done(resolve);
        else if (message.type === 'failed') done(() => reject(new Error(message.message)));
      };
      const onExit = (code: number) =>
        done(wanted === 'stopped' ? resolve : () => reject(new Error(`the work thread exited (${code})`)));
      const done = (settle: () => void) => {
        worker?.off('message', onMessage);
        worker?.off('exit', onExit);
        settle();
      };
      worker?.on('message', onMessage);
      worker?.on('exit', onExit);
    });

  return {
    async start() {
      worker = spawnWorkThread(config, finished.buffer as SharedArrayBuffer);
      worker.on('error', (error) => {
        logger.error(`the work thread failed: ${error.message}`);
        options.onFatal(error);
      });
      worker.on('exit', (code) => {
        if (!stopping) options.onFatal(new Error(`the work thread exited unexpectedly (${code})`));
      });
      await untilWorkThread('ready');
      return front.start();
    },
    async stop() {
      stopping = true;
      const deadline = Date.now() + WORK_THREAD_STOP_MS;
      await front.stop();
      if (!worker) return;
      const stopped = untilWorkThread('stopped').catch(() => {});
      send({ type: 'stop' });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        stopped,
        new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
      ]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

/**
 * The work thread's entry: the compiled `workThread.js` next to this file, or, when the bot runs
 * from its TypeScript sources (`npm run dev`, the tests), `workThread.ts` behind tsx's loader,
 * which a worker thread does not inherit from its parent on Node 20.
 */
function spawnWorkThread(config: Config, finished: SharedArrayBuffer): Worker {
  const workerData = { config, finished };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./workThread.js', import.meta.url), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./workThread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}
