import { readlinkSync, writeSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { type Config, secretsOf } from './config.js';
import type { ForwardedRequest } from './frontDoor.js';
import { createLogger } from './log.js';
import { createWork, type Work } from './work.js';

/** What the main thread (the front door) tells the work thread. */
export type ToWorkThread = { type: 'request'; request: ForwardedRequest } | { type: 'stop' };
/** What the work thread tells the main thread. */
export type FromWorkThread = { type: 'ready' } | { type: 'failed'; message: string } | { type: 'stopped' };

/**
 * Nice value of the work thread: when both threads want the CPU, the acknowledgements go first
 * (a nice-10 thread gets about a tenth of a core from a nice-0 one). Not the lowest (19): that
 * starves the work behind any other busy process on the machine, as it did in the test suite
 * (BENCHMARKS.md measured both at the same ack latency, within the noise of the machine).
 */
const WORK_THREAD_NICE = 10;

/**
 * On Linux a thread has a scheduling priority of its own (`/proc/thread-self` names it), and
 * anyone may lower it. Elsewhere, or if it is refused, the work runs at the process's priority.
 */
function yieldToAcknowledgements(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, WORK_THREAD_NICE);
  } catch {
    // not Linux, or not allowed
  }
}

/**
 * Written from this thread straight to stderr, so the acknowledging thread has nothing to relay.
 * A pipe that is full (a slow log reader) refuses a synchronous write with EAGAIN: then the line
 * goes through the worker's own stderr stream, which queues it, rather than failing the caller.
 */
function writeLine(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    process.stderr.write(`${line}\n`);
  }
}

/** The work thread (see `createThreadedDocsAgent`): the work of every acknowledged request. */
async function main(): Promise<void> {
  yieldToAcknowledgements();
  const port = parentPort;
  if (!port) throw new Error('workThread runs as the worker thread of the bot, started by main');
  const tell = (message: FromWorkThread) => port.postMessage(message);
  const data = workerData as { config: Config; finished: SharedArrayBuffer };
  const { config } = data;
  const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config), sink: writeLine });

  // Requests finished, counted where the main thread reads it without a message (see app.ts).
  const finished = new Int32Array(data.finished);
  const finishedOne = () => Atomics.add(finished, 0, 1);
  let work: Work | undefined;
  port.on('message', (message: ToWorkThread) => {
    if (message.type === 'request') void work?.handle(message.request).then(finishedOne);
    else void (work?.stop() ?? Promise.resolve()).finally(() => tell({ type: 'stopped' }));
  });
  try {
    work = await createWork(config, { logger });
    await work.start();
    tell({ type: 'ready' });
  } catch (error) {
    tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}

await main();
