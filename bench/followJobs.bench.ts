/**
 * Following 10,000 unfinished jobs: the request rate against the configured budget, the time from
 * a job's change in Mintlify to the edit of its Slack card, CPU, and memory, which must depend on
 * the number of jobs and not on how long the bot has been following them (rounds N vs 3N).
 *
 *   npx tsx bench/followJobs.bench.ts [--jobs 10000] [--rpm 60000] [--latency 50] [--concurrency 64]
 *   npm run bench:follow
 *
 * The Mintlify and Slack fakes run in a child process, so their request logs and CPU never count
 * against the bot's. The bot is the real app (createDocsAgent) on real Redis: it resumes the jobs
 * from the store at start, as after a restart.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from '@keyv/redis';
import { createDocsAgent } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { JobRecords, type JobRecord } from '../src/jobs/jobRecord.js';
import { createLogger } from '../src/log.js';
import { openRedisStore } from '../src/store/store.js';
import { startMintlifyFake } from '../test/fakes/mintlifyFake.js';
import { type SeededMessage, startSlackFake } from '../test/fakes/slackFake.js';

const BOT_TOKEN = 'xoxb-bench-0000';
const API_KEY = 'mint_bench_key_0000';
const PROJECT_ID = 'proj_bench';
const CHANNELS = 100;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MB = 1024 * 1024;

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1] ?? fallback) : fallback;
}

type ToChild = { type: 'seed'; jobs: number } | { type: 'changes'; everyMs: number } | { type: 'report' };
interface Card {
  jobId: string;
  channel: string;
  ts: string;
}
interface Report {
  getJobs: number;
  /** getJob requests in each whole second of the run, in order. */
  perSecond: number[];
  latenciesMs: number[];
  changed: number;
}

/** The child: both fakes, the job changes, and the clock that times change -> card edit. */
async function serveFakes(latencyMs: number): Promise<void> {
  // The Mintlify fake listens for its own shutdown on every request it delays: 64 at once is expected.
  setMaxListeners(1_000);
  const mintlify = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID, latencyMs });
  const slack = await startSlackFake({ botToken: BOT_TOKEN });
  const changedAt = new Map<string, number>(); // card ts -> when its job changed in Mintlify
  const cardOf = new Map<string, string>(); // job id -> card ts
  const active: string[] = [];
  const latenciesMs: number[] = [];
  const perSecond = new Map<number, number>(); // second -> getJob requests that arrived in it
  let getJobs = 0;
  let changed = 0;

  // Count and forget what the fakes record, so the child stays small however long the run.
  setInterval(() => {
    const second = Math.floor(Date.now() / 1_000); // counted every 20 ms: right to within 2% of a second
    for (const request of mintlify.requests.splice(0)) {
      if (request.operation !== 'getJob') continue;
      getJobs += 1;
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    for (const call of slack.calls.splice(0)) {
      const at = call.method === 'chat.update' ? changedAt.get(String(call.args.ts)) : undefined;
      if (at === undefined || !call.response.ok) continue;
      latenciesMs.push(call.at - at);
      changedAt.delete(String(call.args.ts));
    }
  }, 20).unref();

  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message: ToChild) => {
    if (message.type === 'seed') {
      const cards: Card[] = [];
      for (let i = 0; i < message.jobs; i += 1) {
        const jobId = `bench-${i}`;
        mintlify.setJob(jobId, { status: 'active', createdAt: new Date().toISOString() });
        const channel = `C${String(i % CHANNELS).padStart(8, '0')}`;
        // A card the bot may edit: Slack lets an app update only its own messages.
        const card = slack.seedMessage(channel, {
          user: 'U0BOT',
          bot_id: 'B0BOT',
          text: `card ${jobId}`,
        } as SeededMessage);
        cards.push({ jobId, channel, ts: card.ts });
        cardOf.set(jobId, card.ts);
        active.push(jobId);
      }
      send({ type: 'seeded', cards });
    } else if (message.type === 'changes') {
      // Half the changes open a pull request on a job that keeps working, half complete the job.
      setInterval(() => {
        const jobId = active.splice(Math.floor(Math.random() * active.length), 1)[0];
        if (!jobId) return;
        const prLink = `https://github.com/acme/docs/pull/${changed}`;
        mintlify.setJob(jobId, changed % 2 === 0 ? { prLink } : { status: 'completed', prLink });
        changedAt.set(cardOf.get(jobId) ?? '', Date.now());
        changed += 1;
      }, message.everyMs).unref();
    } else {
      const seconds = [...perSecond.keys()].sort((a, b) => a - b);
      const counts = seconds.map((second) => perSecond.get(second) ?? 0);
      send({ type: 'report', report: { getJobs, latenciesMs, changed, perSecond: counts } satisfies Report });
    }
  });
  send({ type: 'ready', mintlifyUrl: mintlify.url, slackApiUrl: slack.apiUrl });
  process.on('disconnect', () => process.exit(0));
}

class Fakes {
  private constructor(private readonly child: ChildProcess) {}

  static async start(latencyMs: number): Promise<{ fakes: Fakes; mintlifyUrl: string; slackApiUrl: string }> {
    const child = fork(fileURLToPath(import.meta.url), ['--serve', String(latencyMs)], {
      execArgv: process.execArgv,
    });
    const fakes = new Fakes(child);
    const ready = await fakes.next<{ mintlifyUrl: string; slackApiUrl: string }>('ready');
    return { fakes, ...ready };
  }

  next<T>(type: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the fakes exited (${code})`));
      const onMessage = (message: { type: string } & T) => {
        if (message.type !== type) return;
        this.child.off('message', onMessage).off('exit', onExit);
        resolve(message);
      };
      this.child.on('message', onMessage).on('exit', onExit);
    });
  }

  async ask<T>(message: ToChild, answer: string): Promise<T> {
    const reply = this.next<T>(answer);
    this.child.send(message);
    return reply;
  }

  tell(message: ToChild): void {
    this.child.send(message);
  }

  stop(): void {
    this.child.disconnect();
  }
}

function record(card: Card, now: string): JobRecord {
  return {
    jobId: card.jobId,
    projectId: PROJECT_ID,
    channel: card.channel,
    threadTs: card.ts,
    cardTs: card.ts,
    requestedBy: 'U0USER',
    prompt: `Benchmark job ${card.jobId}`,
    door: 'command',
    status: 'active',
    prLink: null,
    repository: 'https://github.com/acme/docs',
    ref: `mintlify/${card.jobId}`,
    model: 'sonnet',
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    round: 0,
    announced: [],
  };
}

async function seedStore(namespace: string, cards: Card[]): Promise<void> {
  const logger = createLogger({ level: 'error', secrets: [] });
  const store = await openRedisStore({ url: REDIS_URL, namespace, logger });
  const records = new JobRecords(store);
  const now = new Date().toISOString();
  for (let i = 0; i < cards.length; i += 200) {
    await Promise.all(cards.slice(i, i + 200).map((card) => records.save(record(card, now))));
  }
  await store.close();
}

async function dropNamespace(namespace: string): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${namespace}*`, COUNT: 1_000 })) {
    const batch = ([] as string[]).concat(keys);
    if (batch.length > 0) await client.unlink(batch);
  }
  await client.quit();
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / MB;
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function main(): Promise<void> {
  const jobs = argument('jobs', 10_000);
  const rpm = argument('rpm', 60_000);
  const latencyMs = argument('latency', 50);
  const concurrency = argument('concurrency', 64);
  const maxSeconds = argument('max-seconds', 150);
  const namespace = `docs-agent-bench:${randomUUID().slice(0, 8)}`;

  const { fakes, mintlifyUrl, slackApiUrl } = await Fakes.start(latencyMs);
  const { cards } = await fakes.ask<{ cards: Card[] }>({ type: 'seed', jobs }, 'seeded');
  await seedStore(namespace, cards);
  const baselineMb = heapMb();

  const config = loadConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'bench-signing-secret',
    SLACK_API_URL: slackApiUrl,
    MINTLIFY_API_KEY: API_KEY,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: mintlifyUrl,
    REDIS_URL,
    STORE_NAMESPACE: namespace,
    PORT: '0',
    POLL_CONCURRENCY: String(concurrency),
    POLL_REQUESTS_PER_MINUTE: String(rpm),
  });
  const logger = createLogger({ level: 'warn', secrets: [] });
  const bot = await createDocsAgent(config, { logger });
  const startedAt = Date.now();
  await bot.start();
  const resumeMs = Date.now() - startedAt;
  fakes.tell({ type: 'changes', everyMs: 100 });

  // Once a second: the heap at rounds N and 3N (N = 2 checks per job on average), and the peak RSS.
  const heapAt = new Map<number, number>();
  const cpuStart = process.cpuUsage();
  const wallStart = Date.now();
  let peakRssMb = 0;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const { report } = await fakes.ask<{ report: Report }>({ type: 'report' }, 'report');
    peakRssMb = Math.max(peakRssMb, process.memoryUsage().rss / MB);
    const rounds = Math.floor(report.getJobs / jobs);
    if (rounds >= 2 && !heapAt.has(2)) heapAt.set(2, heapMb());
    if (rounds >= 6 && !heapAt.has(6)) heapAt.set(6, heapMb());
    if (heapAt.has(6) || Date.now() - wallStart > maxSeconds * 1_000) break;
  }
  const cpu = process.cpuUsage(cpuStart);
  const wallMs = Date.now() - wallStart;
  const { report } = await fakes.ask<{ report: Report }>({ type: 'report' }, 'report');
  await bot.stop();
  fakes.stop();
  await dropNamespace(namespace);

  // Whole seconds only: not the first (the bucket starts full: one second's worth) nor the last.
  const steady = report.perSecond.slice(1, -1);
  const tenSeconds = steady.slice(0, Math.floor(steady.length / 10) * 10);
  const perTen = Array.from({ length: tenSeconds.length / 10 }, (_, i) =>
    tenSeconds.slice(i * 10, i * 10 + 10).reduce((sum, n) => sum + n, 0),
  );
  const latencies = [...report.latenciesMs].sort((a, b) => a - b);
  const budgetPerSecond = rpm / 60;
  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  console.log(
    [
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
      `jobs ${jobs}, budget ${rpm}/min (${budgetPerSecond}/s), concurrency ${concurrency}, Mintlify latency ${latencyMs} ms`,
      `resume at start: ${resumeMs} ms; ran ${fmt(wallMs / 1000)} s, ${report.getJobs} checks (${fmt(report.getJobs / jobs)} rounds)`,
      `requests/s: mean ${fmt(report.getJobs / (wallMs / 1000))}; steady 1-s windows max ${Math.max(...steady)}, 10-s windows max ${fmt(Math.max(...perTen) / 10)}/s (budget ${budgetPerSecond}/s)`,
      `change -> card edit: ${latencies.length} of ${report.changed} changes seen, p50 ${fmt(percentile(latencies, 50) / 1000, 2)} s, p99 ${fmt(percentile(latencies, 99) / 1000, 2)} s, max ${fmt((latencies.at(-1) ?? 0) / 1000, 2)} s`,
      `CPU (bot process): ${fmt(((cpu.user + cpu.system) / 1000 / wallMs) * 100)} % of one core, ${fmt((cpu.user + cpu.system) / 1000 / report.getJobs, 3)} ms per check`,
      `heap after GC: before the bot ${fmt(baselineMb)} MB, after 2 rounds ${fmt(heapAt.get(2) ?? Number.NaN)} MB, after 6 rounds ${fmt(heapAt.get(6) ?? Number.NaN)} MB`,
      `peak RSS ${fmt(peakRssMb)} MB (resourceUsage maxRSS ${fmt(process.resourceUsage().maxRSS / 1024)} MB)`,
    ].join('\n'),
  );
}

if (process.argv.includes('--serve')) {
  await serveFakes(Number(process.argv[process.argv.indexOf('--serve') + 1]));
} else {
  await main();
  process.exit(0);
}
