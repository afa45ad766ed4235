/**
 * Following 10,000 unfinished jobs with two worker processes: the job reads against the
 * deployment-wide budget (POLL_REQUESTS_PER_MINUTE), each job read once per revisit, the time from a
 * job's change in Mintlify to the edit of its Slack card, and each worker's memory, which must depend
 * on the number of jobs and not on how long they have been followed (rounds 2 vs 6).
 *
 *   npx tsx bench/followJobs.bench.ts [--jobs 10000] [--rpm 60000] [--concurrency 64] [--latency 50]
 *                                     [--workers 2] [--rounds 6] [--max-seconds 180]
 *   npm run bench:follow
 *
 * Three kinds of process: the Mintlify and Slack fakes in one child (their CPU and request logs never
 * count against the bot's), `--workers` worker processes (the real app, createDocsAgent with
 * SERVICES=worker, run through tsx, all on one Redis namespace), and this one, which seeds the job
 * records and reads the numbers. The workers resume the jobs from the store as after a restart
 * (`followUnfinishedJobs` adds one check per job to the `follow` queue); the namespace is deleted at
 * the end. Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDocsAgent } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { JobRecords, type JobRecord } from '../src/jobs/jobRecord.js';
import { createLogger } from '../src/log.js';
import { openRedisStore } from '../src/store/redisStore.js';
import { startMintlifyFake } from '../test/fakes/mintlifyFake.js';
import { type SeededMessage, startSlackFake } from '../test/fakes/slackFake.js';
import { argument, dropNamespace, percentile, REDIS_URL, redisUsage } from './support/processes.js';

const BOT_TOKEN = 'xoxb-bench-0000';
const API_KEY = 'mint_bench_key_0000';
const PROJECT_ID = 'proj_bench';
const CHANNELS = 100;
const MB = 1024 * 1024;
/** The bot's defaults (POLL_INTERVAL_MS, POLL_MAX_INTERVAL_MS): a job is checked every tenth of its age, within these. */
const INTERVAL_MS = 5_000;
const MAX_INTERVAL_MS = 120_000;
/** Checks of one job closer together than this fraction of its interval would be a job read twice (the jitter is ±20 %). */
const EARLY = 0.8;

type ToFakes =
  | { type: 'seed'; jobs: number }
  | { type: 'changes'; everyMs: number; createdAt: number }
  | { type: 'report' }
  | { type: 'stop' };
interface Card {
  jobId: string;
  channel: string;
  ts: string;
}
interface Report {
  getJobs: number;
  /** getJob answers in each second from the first read's to the current one (0 for a second without any). */
  perSecond: number[];
  /** CPU time of the fakes' process so far, in ms. */
  cpuMs: number;
  latenciesMs: number[];
  /** From the first read that saw a change to its card's edit: the bot's own share of the latency. */
  sawToEditMs: number[];
  /** Change -> card edit of the jobs that changed before their first read (the start's round). */
  firstRoundLatenciesMs: number[];
  changed: number;
  /** Time between two reads of the same job, for every read after a job's first. */
  gapsMs: number[];
  /** Reads sooner than EARLY x the job's interval after its previous read. */
  early: number;
  /** When the first getJob arrived (Date.now()). */
  firstReadAt: number;
}

/** The child: both fakes, the job changes, and the clocks (change -> card edit, read -> read of a job). */
async function serveFakes(latencyMs: number): Promise<void> {
  // The Mintlify fake listens for its own shutdown on every request it delays: hundreds at once.
  setMaxListeners(1_000);
  const mintlify = await startMintlifyFake({
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    latencyMs,
    // The bench measures the bot, well past the service's hourly limits.
    rateLimits: false,
  });
  const slack = await startSlackFake({ botToken: BOT_TOKEN });
  const changedAt = new Map<string, number>(); // card ts -> when its job changed in Mintlify
  const cardOf = new Map<string, string>(); // job id -> card ts
  const lastReadAt = new Map<string, number>(); // job id -> its last getJob
  const active: string[] = [];
  const latenciesMs: number[] = [];
  const sawAt = new Map<string, number>(); // card ts -> the first read after its job changed
  const sawToEditMs: number[] = [];
  // Cards of jobs that changed before their first read: still in the start's first round of reads.
  const changedUnread = new Set<string>();
  const firstRoundLatenciesMs: number[] = [];
  const gapsMs: number[] = [];
  const perSecond = new Map<number, number>(); // second -> getJob requests that arrived in it
  let createdAt = Date.now();
  let getJobs = 0;
  let early = 0;
  let changed = 0;
  let firstReadAt = 0;

  // Each read as Mintlify answers it (after its latency), counted per second and per job.
  mintlify.onAnswer((request, answer) => {
    if (request.operation !== 'getJob') return;
    const at = Date.now();
    getJobs += 1;
    firstReadAt ||= at;
    const second = Math.floor(at / 1_000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    const jobId = decodeURIComponent(request.path.split('/').at(-1) ?? '');
    const card = cardOf.get(jobId);
    // The first read that answered the job's new status (one in flight as it changed answered the old).
    const status = (answer.body as { status?: unknown } | undefined)?.status;
    if (card !== undefined && status !== 'active' && changedAt.has(card) && !sawAt.has(card))
      sawAt.set(card, at);
    const last = lastReadAt.get(jobId);
    lastReadAt.set(jobId, at);
    if (last === undefined) return;
    gapsMs.push(at - last);
    // The bot's cadence: a tenth of the job's age, within the interval and the longest wait.
    const intervalMs = Math.min(MAX_INTERVAL_MS, Math.max(INTERVAL_MS, (last - createdAt) / 10));
    if (at - last < EARLY * intervalMs) early += 1;
  });
  // Forget what the fakes record, so the child stays small however long the run.
  setInterval(() => {
    mintlify.requests.splice(0);
    for (const call of slack.calls.splice(0)) {
      const at = call.method === 'chat.update' ? changedAt.get(String(call.args.ts)) : undefined;
      if (at === undefined || !call.response.ok) continue;
      (changedUnread.delete(String(call.args.ts)) ? firstRoundLatenciesMs : latenciesMs).push(call.at - at);
      const saw = sawAt.get(String(call.args.ts));
      if (saw !== undefined) sawToEditMs.push(call.at - saw);
      changedAt.delete(String(call.args.ts));
      sawAt.delete(String(call.args.ts));
    }
  }, 20).unref();

  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message: ToFakes) => {
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
      createdAt = message.createdAt;
      // Half the changes complete a job with its pull request, half fail it (an active job has no
      // pull request in the spec, so none is opened on one that keeps working).
      setInterval(() => {
        const jobId = active.splice(Math.floor(Math.random() * active.length), 1)[0];
        if (!jobId) return;
        const prLink = `https://github.com/acme/docs/pull/${changed}`;
        mintlify.setJob(jobId, changed % 2 === 0 ? { status: 'failed' } : { status: 'completed', prLink });
        changedAt.set(cardOf.get(jobId) ?? '', Date.now());
        if (!lastReadAt.has(jobId)) changedUnread.add(cardOf.get(jobId) ?? '');
        changed += 1;
      }, message.everyMs).unref();
    } else if (message.type === 'report') {
      const first = Math.floor(firstReadAt / 1_000);
      const now = Math.floor(Date.now() / 1_000);
      const counts = firstReadAt
        ? Array.from({ length: now - first + 1 }, (_, i) => perSecond.get(first + i) ?? 0)
        : [];
      const cpu = process.cpuUsage();
      const report: Report = {
        getJobs,
        latenciesMs,
        sawToEditMs,
        firstRoundLatenciesMs,
        changed,
        perSecond: counts,
        cpuMs: (cpu.user + cpu.system) / 1000,
        gapsMs,
        early,
        firstReadAt,
      };
      send({ type: 'report', report });
    }
  });
  send({ type: 'ready', mintlifyUrl: mintlify.url, slackApiUrl: slack.apiUrl });
  process.on('disconnect', () => process.exit(0));
}

interface WorkerSettings {
  mintlifyUrl: string;
  slackApiUrl: string;
  namespace: string;
  rpm: number;
  concurrency: number;
}
interface WorkerStats {
  rssMb: number;
  /** heapUsed after a forced GC. */
  heapMb: number;
  /** CPU time of the process so far (user + system), in ms. */
  cpuMs: number;
}

/** A worker process: the real app with SERVICES=worker, which answers for its memory and CPU. */
async function serveWorker(settings: WorkerSettings): Promise<void> {
  const config = loadConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'bench-signing-secret',
    SLACK_API_URL: settings.slackApiUrl,
    MINTLIFY_API_KEY: API_KEY,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: settings.mintlifyUrl,
    REDIS_URL,
    STORE_NAMESPACE: settings.namespace,
    SERVICES: 'worker',
    POLL_CONCURRENCY: String(settings.concurrency),
    POLL_REQUESTS_PER_MINUTE: String(settings.rpm),
  });
  // Warnings and errors go to stderr; of the info lines only the count of resumed jobs is kept.
  let startedAt = Date.now();
  const logger = createLogger({
    level: 'info',
    secrets: [],
    sink: (line) => {
      const found = /following (\d+) unfinished job/.exec(line);
      if (found)
        process.send?.({ type: 'resumed', count: Number(found[1]), afterMs: Date.now() - startedAt });
      else if (!line.includes(' INFO ')) process.stderr.write(`[worker ${process.pid}] ${line}\n`);
    },
  });
  const gc = globalThis.gc ?? (() => {});
  const stats = (): WorkerStats => {
    gc();
    const cpu = process.cpuUsage();
    return {
      rssMb: process.memoryUsage().rss / MB,
      heapMb: process.memoryUsage().heapUsed / MB,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
  };
  const bot = await createDocsAgent(config, { logger });
  const before = stats();
  startedAt = Date.now();
  // Resolves once the processors run; the checks of the unfinished jobs are added after it, in the background.
  await bot.start();
  process.send?.({ type: 'started', startMs: Date.now() - startedAt, before });
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stats') process.send?.({ type: 'stats', stats: stats() });
    if (message.type === 'following') {
      void bot.following().then((count) => process.send?.({ type: 'following', count }));
    }
    if (message.type === 'stop') void bot.stop().finally(() => process.exit(0));
  });
  process.on('disconnect', () => void bot.stop().finally(() => process.exit(0)));
}

/** A child process of this bench, spoken to by messages. */
class Child {
  constructor(private readonly child: ChildProcess) {}

  static fork(args: string[], execArgv: string[] = []): Child {
    return new Child(
      fork(fileURLToPath(import.meta.url), args, {
        execArgv: ['--import', 'tsx', '--expose-gc', ...execArgv],
      }),
    );
  }

  next<T>(type: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`a child process exited (${code})`));
      const onMessage = (message: { type: string } & T) => {
        if (message.type !== type) return;
        this.child.off('message', onMessage).off('exit', onExit);
        resolve(message);
      };
      this.child.on('message', onMessage).on('exit', onExit);
    });
  }

  async ask<T>(message: { type: string; [field: string]: unknown }, answer: string): Promise<T> {
    const reply = this.next<T>(answer);
    this.child.send(message);
    return reply;
  }

  tell(message: object): void {
    this.child.send(message);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'stop' });
    this.child.disconnect();
    await exited;
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

async function seedStore(namespace: string, cards: Card[], now: string): Promise<void> {
  const logger = createLogger({ level: 'error', secrets: [] });
  const store = await openRedisStore({ url: REDIS_URL, namespace, logger });
  const records = new JobRecords(store);
  for (let i = 0; i < cards.length; i += 200) {
    await Promise.all(cards.slice(i, i + 200).map((card) => records.save(record(card, now))));
  }
  await store.close();
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const jobs = Number(argument('jobs', '10000'));
  const rpm = Number(argument('rpm', '60000'));
  const concurrency = Number(argument('concurrency', '64'));
  const latencyMs = Number(argument('latency', '50'));
  const workerCount = Number(argument('workers', '2'));
  const rounds = Number(argument('rounds', '6'));
  const maxSeconds = Number(argument('max-seconds', '180'));
  const namespace = `docs-agent-bench:follow:${randomUUID().slice(0, 8)}`;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void dropNamespace(namespace).finally(() => process.exit(130)));
  }

  const fakes = Child.fork(['--fakes', String(latencyMs)]);
  const workers: Child[] = [];
  try {
    const { mintlifyUrl, slackApiUrl } = await fakes.next<{ mintlifyUrl: string; slackApiUrl: string }>(
      'ready',
    );
    const { cards } = await fakes.ask<{ cards: Card[] }>({ type: 'seed', jobs }, 'seeded');
    const seededAt = Date.now();
    const createdAt = new Date();
    await seedStore(namespace, cards, createdAt.toISOString());
    const seedMs = Date.now() - seededAt;

    // The workers start together, as after a deploy; each adds the checks the queue does not hold.
    const settings: WorkerSettings = { mintlifyUrl, slackApiUrl, namespace, rpm, concurrency };
    const redisStart = await redisUsage();
    const wallStart = Date.now();
    for (let i = 0; i < workerCount; i += 1) {
      // BENCH_CPU_PROFILE=<dir>: each worker writes a CPU profile there when it exits.
      const profile = process.env.BENCH_CPU_PROFILE;
      const execArgv = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
      workers.push(Child.fork(['--worker', JSON.stringify(settings)], execArgv));
    }
    const resumed = workers.map(() => ({ count: 0, afterMs: Number.NaN }));
    workers.forEach((worker, i) => {
      void worker.next<{ count: number; afterMs: number }>('resumed').then(
        (message) => (resumed[i] = message),
        () => {},
      );
    });
    const started = await Promise.all(
      workers.map((worker) => worker.next<{ startMs: number; before: WorkerStats }>('started')),
    );
    const startedAfterMs = Date.now() - wallStart;
    // Then the workers add one check per job (each skips the jobs whose check the other added first).
    let queued = 0;
    while (queued < jobs && Date.now() - wallStart < maxSeconds * 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      queued = (await workers[0]?.ask<{ count: number }>({ type: 'following' }, 'following'))?.count ?? 0;
    }
    const allQueuedAfterMs = Date.now() - wallStart;
    // The steady state starts here: every job has its check, and the jobs start changing.
    const steadyAt = Date.now();
    const steadyStart = {
      redis: await redisUsage(),
      workers: await Promise.all(
        workers.map((worker) => worker.ask<{ stats: WorkerStats }>({ type: 'stats' }, 'stats')),
      ),
      fakes: (await fakes.ask<{ report: Report }>({ type: 'report' }, 'report')).report,
    };
    fakes.tell({ type: 'changes', everyMs: 100, createdAt: createdAt.getTime() });

    // Once a second: each worker's memory at round 1 and every second round (a round: one read per job, on average).
    const marks = [1, ...Array.from({ length: Math.floor(rounds / 2) }, (_, i) => 2 * (i + 1))];
    const statsAt = new Map<number, WorkerStats[]>();
    let peakRss = workers.map(() => 0);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const { report } = await fakes.ask<{ report: Report }>({ type: 'report' }, 'report');
      const done = Math.floor(report.getJobs / jobs);
      const due = marks.filter((mark) => mark <= done && !statsAt.has(mark));
      const stats = await Promise.all(
        workers.map((worker) => worker.ask<{ stats: WorkerStats }>({ type: 'stats' }, 'stats')),
      );
      peakRss = peakRss.map((peak, i) => Math.max(peak, stats[i]?.stats.rssMb ?? 0));
      for (const mark of due) {
        statsAt.set(
          mark,
          stats.map(({ stats: s }) => s),
        );
      }
      if (Math.floor(report.getJobs / jobs) >= rounds || Date.now() - wallStart > maxSeconds * 1_000) break;
    }
    const wallMs = Date.now() - wallStart;
    const { report } = await fakes.ask<{ report: Report }>({ type: 'report' }, 'report');
    const redisEnd = await redisUsage();
    const redisCpu = redisEnd.cpuSeconds - redisStart.cpuSeconds;
    const redisCommands = redisEnd.commands - redisStart.commands;
    const final = await Promise.all(
      workers.map((worker) => worker.ask<{ stats: WorkerStats }>({ type: 'stats' }, 'stats')),
    );

    // Reads per 10 seconds, over every window of 10 whole seconds from the first read's second (the
    // first one partly before the first read) to the last whole second; and the consecutive ones.
    const whole = report.perSecond.slice(0, -1);
    const sliding = whole.slice(9).map((_, i) => whole.slice(i, i + 10).reduce((sum, n) => sum + n, 0));
    const sliding60 = whole.slice(59).map((_, i) => whole.slice(i, i + 60).reduce((sum, n) => sum + n, 0));
    const perTen = Array.from({ length: Math.floor(whole.length / 10) }, (_, i) =>
      whole.slice(i * 10, i * 10 + 10).reduce((sum, n) => sum + n, 0),
    );
    const latencies = [...report.latenciesMs].sort((a, b) => a - b);
    const gaps = [...report.gapsMs].sort((a, b) => a - b);
    const sawToEdit = [...report.sawToEditMs].sort((a, b) => a - b);
    const firstRound = [...report.firstRoundLatenciesMs].sort((a, b) => a - b);
    const budgetPerSecond = rpm / 60;
    const readSeconds = (Date.now() - report.firstReadAt) / 1000;
    const revisit = Math.max(INTERVAL_MS / 1000, jobs / budgetPerSecond);
    const cpuMs = final.map(({ stats }, i) => stats.cpuMs - (started[i]?.before.cpuMs ?? 0));
    const steadyMs = Date.now() - steadyAt;
    const steadyReads = report.getJobs - steadyStart.fakes.getJobs;
    const steadyFakesMs = report.cpuMs - steadyStart.fakes.cpuMs;
    const steadyCpuMs = final.map(({ stats }, i) => stats.cpuMs - (steadyStart.workers[i]?.stats.cpuMs ?? 0));
    const steadyRedisMs = (redisEnd.cpuSeconds - steadyStart.redis.cpuSeconds) * 1000;
    const steadyCommands = redisEnd.commands - steadyStart.redis.commands;
    const perWorker = (pick: (s: WorkerStats) => number, mark: number) =>
      (statsAt.get(mark) ?? []).map((s) => fmt(pick(s))).join(' / ');
    console.log(
      [
        `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
        `jobs ${jobs}, ${workerCount} workers, budget ${rpm}/min (${fmt(budgetPerSecond)}/s: each job read every ${fmt(revisit)} s at best), concurrency ${concurrency} per worker, Mintlify latency ${latencyMs} ms`,
        `seeding ${jobs} job records: ${fmt(seedMs / 1000, 2)} s; worker start(): ${started.map((s) => `${fmt(s.startMs / 1000, 2)} s`).join(' / ')}, both started ${fmt(startedAfterMs / 1000, 2)} s after spawning; first read ${fmt((report.firstReadAt - wallStart) / 1000, 2)} s after spawning; a check queued for every job ${fmt(allQueuedAfterMs / 1000, 2)} s after spawning (checks added by each worker: ${resumed.map((r) => `${r.count}${Number.isNaN(r.afterMs) ? '' : ` in ${fmt(r.afterMs / 1000, 2)} s from its start()`}`).join(' / ')})`,
        `ran ${fmt(wallMs / 1000)} s: ${report.getJobs} reads (${fmt(report.getJobs / jobs)} rounds); mean ${fmt(report.getJobs / readSeconds)}/s from the first read; 1-s windows max ${Math.max(...whole)}/s; every 10-s window (${sliding.length}, sliding by 1 s): max ${fmt(Math.max(...sliding) / 10)}/s = ${fmt((Math.max(...sliding) / 10 / budgetPerSecond) * 100)} % of the budget (${fmt(budgetPerSecond)}/s)${sliding60.length ? `; every 60-s window: max ${fmt(Math.max(...sliding60) / 60)}/s = ${fmt((Math.max(...sliding60) / 60 / budgetPerSecond) * 100)} %` : ''}`,
        `consecutive 10-s windows (reads/s): ${perTen.map((n) => fmt(n / 10, 0)).join(' ')}`,
        `read -> next read of the same job: ${gaps.length} gaps, min ${fmt((gaps[0] ?? 0) / 1000, 2)} s, p1 ${fmt(percentile(gaps, 1) / 1000, 2)} s, p50 ${fmt(percentile(gaps, 50) / 1000, 2)} s, p99 ${fmt(percentile(gaps, 99) / 1000, 2)} s, max ${fmt((gaps.at(-1) ?? 0) / 1000, 2)} s; sooner than ${EARLY} x the job's interval: ${report.early}`,
        `change -> card edit of a job read before its change: ${latencies.length} of ${report.changed} changes, p50 ${fmt(percentile(latencies, 50) / 1000, 2)} s, p99 ${fmt(percentile(latencies, 99) / 1000, 2)} s, max ${fmt((latencies.at(-1) ?? 0) / 1000, 2)} s; of which from the read that saw the change: p50 ${fmt(percentile(sawToEdit, 50), 0)} ms, p99 ${fmt(percentile(sawToEdit, 99), 0)} ms, max ${fmt(sawToEdit.at(-1) ?? 0, 0)} ms`,
        `change -> card edit of a job not read yet when it changed (the start's first round of reads): ${firstRound.length} changes, p50 ${fmt(percentile(firstRound, 50) / 1000, 2)} s, p99 ${fmt(percentile(firstRound, 99) / 1000, 2)} s, max ${fmt((firstRound.at(-1) ?? 0) / 1000, 2)} s`,
        `CPU over the whole run (% of one core): workers ${cpuMs.map((ms) => `${fmt((ms / wallMs) * 100)} %`).join(' / ')}, Redis ${fmt(((redisCpu * 1000) / wallMs) * 100)} % (${fmt(redisCommands / report.getJobs)} Redis commands per read, the start's adds included)`,
        `steady state (${fmt(steadyMs / 1000)} s from the moment every job had its check, ${steadyReads} reads, ${fmt(steadyReads / (steadyMs / 1000))}/s): workers ${steadyCpuMs.map((ms) => `${fmt((ms / steadyMs) * 100)} %`).join(' / ')} of one core, ${fmt(steadyCpuMs.reduce((a, b) => a + b, 0) / steadyReads, 3)} ms of worker CPU per read; Redis ${fmt((steadyRedisMs / steadyMs) * 100)} % of one core, ${fmt(steadyRedisMs / steadyReads, 3)} ms and ${fmt(steadyCommands / steadyReads)} commands per read (commands inside BullMQ's Lua scripts counted); the fakes ${fmt((steadyFakesMs / steadyMs) * 100)} % of one core`,
        `heap after GC per worker (MB): started ${started.map((s) => fmt(s.before.heapMb)).join(' / ')}; ${marks.map((mark) => `round ${mark}: ${perWorker((s) => s.heapMb, mark)}`).join('; ')}`,
        `RSS per worker (MB): started ${started.map((s) => fmt(s.before.rssMb)).join(' / ')}; ${marks.map((mark) => `round ${mark}: ${perWorker((s) => s.rssMb, mark)}`).join('; ')}; peak ${peakRss.map((mb) => fmt(mb)).join(' / ')}`,
      ].join('\n'),
    );
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await fakes.stop();
    await dropNamespace(namespace);
  }
}

if (process.argv.includes('--fakes')) await serveFakes(Number(argument('fakes', '50')));
else if (process.argv.includes('--worker'))
  await serveWorker(JSON.parse(argument('worker', '{}')) as WorkerSettings);
else {
  await main();
  process.exit(0);
}
