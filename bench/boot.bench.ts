/**
 * Boot time and idle memory: from spawning a fresh process to its "listening on port" line, and its
 * resident memory once it has sat idle, for the bot (default SERVICES, with Redis and without, and
 * SERVICES=web with Redis), a bare Bolt app, and the bare app with a BullMQ queue on Redis (bench/support/queuedBoltApp.ts: what
 * any web role with a durable hand-off loads and connects before it listens), each over `--runs`
 * fresh processes taking turns.
 *
 *   npx tsx bench/boot.bench.ts [--runs 10] [--idle 5] [--loader js|tsx] [--slack-latency 0]
 *   npm run bench:boot
 *
 * `--loader js` (the default) runs plain JavaScript, as production does (`npm run build && npm start`):
 * the bench compiles src/ and the bare app (bench/support/bareBoltApp.ts) with the project's own
 * tsc settings into node_modules/.cache/docs-agent-bench/js/ and runs `node <file>.js` for both.
 * `--loader tsx` runs both from source through the same loader (`node --import tsx <file>.ts`).
 * Slack is the Slack fake in this process, answering at once, or `--slack-latency` ms late (neither
 * the bot nor the bare app waits for its auth.test before it listens; both send it at start). The bot with Redis starts on a
 * namespace of its own, deleted after each run. A first round is run and not counted (it fills the
 * file system cache, and tsx's). The bot listens first and starts its worker right after: the time to
 * its "worker is running" line is reported too.
 */
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { startSlackFake } from '../test/fakes/slackFake.js';
import {
  argument,
  BOOT_BOT_TOKEN,
  bootEnv,
  dropNamespace,
  entryPoints,
  LISTENING,
  median,
  REDIS_URL,
  rssMb,
  startNode,
  WORKER_RUNNING,
} from './support/processes.js';

type Variant = 'bare' | 'queued' | 'redis' | 'web' | 'memory';
const NAMES: Record<Variant, string> = {
  bare: 'bare Bolt app (ack only)',
  queued: 'bare Bolt app + a BullMQ queue on Redis',
  redis: 'bot, SERVICES=web,worker, with Redis',
  web: 'bot, SERVICES=web, with Redis',
  memory: 'bot, SERVICES=web,worker, without Redis',
};

const FILES: Record<Variant, string> = {
  bare: 'bench/support/bareBoltApp.ts',
  queued: 'bench/support/queuedBoltApp.ts',
  redis: 'src/main.ts',
  web: 'src/main.ts',
  memory: 'src/main.ts',
};

interface Measure {
  bootMs: number;
  /** The bot's worker: from spawning to its "worker is running" line. */
  workerMs?: number;
  rssAtListenMb: number;
  idleRssMb: number;
}

async function main(): Promise<void> {
  const runs = Number(argument('runs', '10'));
  const idleMs = Number(argument('idle', '5')) * 1000;
  const loader = argument('loader', 'js');
  const entry = entryPoints(loader);
  // How long Slack takes to answer (auth.test, which the bot asks at start): 0 on loopback, some
  // 100-300 ms from a server to slack.com.
  const slackLatencyMs = Number(argument('slack-latency', '0'));
  const slack = await startSlackFake({ botToken: BOOT_BOT_TOKEN, latencyMs: slackLatencyMs });
  const run = `docs-agent-bench:boot:${randomUUID().slice(0, 8)}`;
  const { app: common, bot } = bootEnv(slack.apiUrl);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void dropNamespace(run).finally(() => process.exit(130)));
  }

  const once = async (variant: Variant, n: number): Promise<Measure> => {
    const { args, execArgv } = entry(FILES[variant]);
    const namespace = `${run}:${n}`;
    const env =
      variant === 'bare'
        ? common
        : variant === 'queued'
          ? { ...common, REDIS_URL, STORE_NAMESPACE: namespace }
          : variant === 'redis'
            ? { ...bot, REDIS_URL, STORE_NAMESPACE: namespace }
            : variant === 'web'
              ? { ...bot, REDIS_URL, STORE_NAMESPACE: namespace, SERVICES: 'web' }
              : bot;
    const child = startNode(args, env, execArgv);
    try {
      const { at } = await child.line(LISTENING);
      const rssAtListenMb = rssMb(child.pid);
      const worker =
        variant === 'redis' || variant === 'memory' ? await child.line(WORKER_RUNNING) : undefined;
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      return {
        bootMs: at - child.spawnedAt,
        ...(worker ? { workerMs: worker.at - child.spawnedAt } : {}),
        rssAtListenMb,
        idleRssMb: rssMb(child.pid),
      };
    } finally {
      await child.stop();
      if (variant !== 'bare' && variant !== 'memory') await dropNamespace(namespace);
    }
  };

  const variants: Variant[] = ['bare', 'queued', 'redis', 'web', 'memory'];
  const results = new Map<Variant, Measure[]>(variants.map((variant) => [variant, []]));
  let n = 0;
  try {
    for (let round = 0; round <= runs; round += 1) {
      for (const variant of variants) {
        const measure = await once(variant, (n += 1));
        if (round > 0) results.get(variant)?.push(measure);
        process.stderr.write(
          `${round === 0 ? 'warm-up' : `run ${round}`}, ${variant}: ${measure.bootMs.toFixed(0)} ms to listening${measure.workerMs === undefined ? '' : ` (worker ${measure.workerMs.toFixed(0)} ms)`}, RSS ${measure.rssAtListenMb.toFixed(1)} MB then, ${measure.idleRssMb.toFixed(1)} MB after ${idleMs / 1000} s idle\n`,
        );
      }
    }
  } finally {
    await slack.close();
    await dropNamespace(run);
  }

  const bare = results.get('bare') ?? [];
  const bareBoot = median(bare.map((m) => m.bootMs));
  const bareRss = median(bare.map((m) => m.idleRssMb));
  console.log(
    `\nboot to listening and idle RSS; ${runs} fresh processes each (after one uncounted round), ${loader === 'js' ? 'compiled JavaScript (node <file>.js)' : 'from source (node --import tsx <file>.ts)'}, idle ${idleMs / 1000} s, Slack answering after ${slackLatencyMs} ms`,
  );
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}\n`,
  );
  console.log(
    '| app | boot p50 | boot min / max | boot vs bare | worker running p50 | RSS at listening p50 | idle RSS p50 | idle RSS min / max | idle RSS vs bare |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const variant of variants) {
    const measures = results.get(variant) ?? [];
    const boots = measures.map((m) => m.bootMs);
    const rss = measures.map((m) => m.idleRssMb);
    const boot = median(boots);
    const idle = median(rss);
    const vs = (value: number, floor: number) => (variant === 'bare' ? '' : `${(value / floor).toFixed(2)}x`);
    const workers = measures.flatMap((m) => (m.workerMs === undefined ? [] : [m.workerMs]));
    const worker = workers.length > 0 ? `${median(workers).toFixed(0)} ms` : '';
    console.log(
      `| ${NAMES[variant]} | ${boot.toFixed(0)} ms | ${Math.min(...boots).toFixed(0)} / ${Math.max(...boots).toFixed(0)} ms | ${vs(boot, bareBoot)} | ${worker} | ${median(measures.map((m) => m.rssAtListenMb)).toFixed(1)} MB | ${idle.toFixed(1)} MB | ${Math.min(...rss).toFixed(1)} / ${Math.max(...rss).toFixed(1)} MB | ${vs(idle, bareRss)} |`,
    );
  }
}

await main();
process.exit(0);
