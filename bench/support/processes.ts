/**
 * What the benchmarks share: Node processes started as an operator starts them (the bot's
 * `src/main.ts` configured by the environment, the bare Bolt app), watched through their log lines,
 * and the Redis namespaces they write, deleted afterwards.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@keyv/redis';
import { dropNamespace as dropTestNamespace } from '../../test/support/redis.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The project's root: every process starts here, so `--import tsx` and `src/main.ts` resolve. */
export const ROOT = new URL('../../', import.meta.url).pathname;

/** Where the benches compile the bot and the bare app to plain JavaScript (`--loader js`). */
const CACHE = join(ROOT, 'node_modules/.cache/docs-agent-bench');

/** How a bench runs the bot and the bare app: both compiled (`node <file>.js`), or both from source through tsx. */
export type Loader = 'js' | 'tsx';

/**
 * Compiles src/ and the bare app (once per bench run) with the project's tsc settings, as
 * `npm run build` compiles src/ into dist/, and answers how to run a .ts entry of the project
 * with `loader`: `node <out>/<file>.js`, or `node --import tsx <file>.ts`.
 */
export function entryPoints(loader: string): (file: string) => { args: string[]; execArgv: string[] } {
  if (loader === 'tsx') return (file) => ({ args: [file], execArgv: ['--import', 'tsx'] });
  if (loader !== 'js') throw new Error('--loader is js or tsx');
  const out = join(CACHE, 'js');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  const tsconfig = join(CACHE, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: '../../../tsconfig.build.json',
      compilerOptions: { outDir: 'js', rootDir: '../../..', sourceMap: false },
      include: [
        '../../../src',
        '../../../bench/support/bareBoltApp.ts',
        '../../../bench/support/queuedBoltApp.ts',
      ],
    }),
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
    stdio: 'inherit',
  });
  // src/version.ts reads ../package.json; it also makes the output ES modules ("type": "module").
  copyFileSync(join(ROOT, 'package.json'), join(out, 'package.json'));
  return (file) => ({ args: [join(out, file.replace(/\.ts$/, '.js'))], execArgv: [] });
}

/** Where a role of the bot writes that it is ready: the web role's port, or the worker's line. */
export const LISTENING = /listening on port (\d+)/;
export const WORKER_RUNNING = /worker is running/;

export interface NodeProcess {
  child: ChildProcess;
  pid: number;
  /** `performance.now()` just before the process was spawned. */
  spawnedAt: number;
  exited: Promise<number | null>;
  /** The last lines the process wrote (stdout and stderr), for error messages. */
  tail(): string;
  /** Resolves with the first line matching `pattern` and `performance.now()` when this process read it. */
  line(pattern: RegExp, timeoutMs?: number): Promise<{ line: string; at: number }>;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Every process a bench started and that has not exited: killed if the bench exits first. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `node <args>` in the project's root with exactly `env` (and PATH), its output read line by line. */
export function startNode(args: string[], env: Record<string, string>, execArgv: string[] = []): NodeProcess {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...execArgv, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = once(child, 'exit').then(([code]) => {
    running.delete(child);
    return code as number | null;
  });
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  const onLine = (line: string) => {
    lines.push(line);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
    for (const waiter of waiters) {
      if (!waiter.pattern.test(line)) continue;
      waiters.delete(waiter);
      waiter.resolve(line);
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) onLine(line);
    });
  }
  const tail = () => lines.slice(-30).join('\n');
  return {
    child,
    pid: child.pid ?? 0,
    spawnedAt,
    exited,
    tail,
    line(pattern, timeoutMs = 30_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve({ line: seen, at: performance.now() });
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`${args.join(' ')} did not print ${pattern} within ${timeoutMs} ms:\n${tail()}`));
        }, timeoutMs);
        const waiter = {
          pattern,
          resolve: (line: string) => {
            clearTimeout(timer);
            resolve({ line, at: performance.now() });
          },
        };
        waiters.add(waiter);
        void exited.then((code) => {
          if (!waiters.delete(waiter)) return;
          clearTimeout(timer);
          reject(new Error(`${args.join(' ')} exited (${code}) before printing ${pattern}:\n${tail()}`));
        });
      });
    },
    async stop(graceMs = 12_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The port in a "listening on port N" line. */
export const portOf = (line: string) => Number(LISTENING.exec(line)?.[1]);

/** Resident set size of a process, from /proc (Linux), in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

/** CPU time a process has used so far (user + system), in seconds, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the command's closing parenthesis.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Binds a process (every thread of it) to the given CPUs, as `taskset -a -p -c` does; `--pin` in
 * the benches uses it to give the app under test a core of its own. Linux only.
 */
export function pinTo(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** Redis's process id (INFO server), to read its CPU time. */
export async function redisPid(): Promise<number> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  const info = await client.info('server');
  await client.quit();
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

/** Deletes every key under `prefix` (the bot's records, and BullMQ's queues, which use the namespace as their prefix). */
export function dropNamespace(prefix: string): Promise<number> {
  return dropTestNamespace(prefix, REDIS_URL);
}

/** Redis's own CPU time so far (user + system, in seconds) and the commands it has run (INFO commandstats). */
export async function redisUsage(): Promise<{ cpuSeconds: number; commands: number }> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  const info = `${await client.info('cpu')}\n${await client.info('commandstats')}`;
  await client.quit();
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  const commands = [...info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce(
    (sum, [, calls]) => sum + Number(calls),
    0,
  );
  return { cpuSeconds: read('used_cpu_user') + read('used_cpu_sys'), commands };
}

/** The bot token the boot benches' Slack fake takes. */
export const BOOT_BOT_TOKEN = 'xoxb-bench-boot-0000';

/**
 * The environment of an app a boot bench starts: `app` for the bare apps, `bot` for the bot, whose
 * Mintlify address answers nothing (nothing asks it while the bot boots and idles).
 */
export function bootEnv(slackApiUrl: string): { app: Record<string, string>; bot: Record<string, string> } {
  const app = {
    SLACK_BOT_TOKEN: BOOT_BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'bench-signing-secret',
    SLACK_API_URL: slackApiUrl,
    PORT: '0',
  };
  return {
    app,
    bot: {
      ...app,
      MINTLIFY_API_KEY: 'mint_bench_boot_key',
      MINTLIFY_PROJECT_ID: 'proj_bench',
      MINTLIFY_API_URL: 'http://127.0.0.1:9',
    },
  };
}

export function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

export const numbers = (text: string) => text.split(',').filter(Boolean).map(Number);

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
