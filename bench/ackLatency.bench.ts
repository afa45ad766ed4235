/**
 * Acknowledgement latency of `/docs-agent <instruction>` under load: how long Slack waits for the
 * HTTP answer (the ack; Slack allows 3 s), for the bot and, in the same run, for a bare Bolt app
 * whose listener only calls ack() (the floor).
 *
 *   npx tsx bench/ackLatency.bench.ts [--rates 20,100] [--seconds 20] [--concurrency 200] [--requests 2000]
 *                                     [--repeats 2] [--latency 80] [--setups bare,queued,web,split,single]
 *                                     [--loader js|tsx] [--pin] [--quick]
 *   npm run bench:ack
 *
 * The apps under test, each in fresh processes for every run, as an operator runs them:
 *   bare    bench/support/bareBoltApp.ts
 *   queued  bench/support/queuedBoltApp.ts: the bare app that puts each command on a BullMQ queue on
 *           Redis before its ack, the least the bot's durable hand-off needs (nothing works the queue)
 *   web     the bot (src/main.ts) with SERVICES=web alone: the web role's own cost, with nothing
 *           working the queue (its commands are left queued; the namespace is deleted afterwards)
 *   split   the bot with SERVICES=web in one process and SERVICES=worker in another
 *   single  the bot with both roles in one process (the default SERVICES=web,worker)
 * `--loader js` (the default) compiles src/ and the bare app with tsc and runs `node <file>.js`, as
 * `npm run build && npm start` does; `--loader tsx` runs both from source (`node --import tsx`).
 * The bot's setups run on Redis (REDIS_URL, default redis://127.0.0.1:6379), in a namespace of their
 * own (web and worker share it), deleted once they stop. The Slack and Mintlify fakes run in a child
 * process and answer every call after `--latency` ms; this process sends the signed commands and
 * times each until its answer. After each load of `split` and `single` the bench waits until every
 * acknowledged command's work is done by the bot's worker (its job created at Mintlify, and its
 * card posted), so the bot measured is one that does its work. Each run starts with a warm-up
 * of 100 commands, 10 in flight, whose work is done before the load starts. `BENCH_CPU_PROFILE=<dir>`
 * has every process of the apps write a CPU profile there. `--pin` (Linux, 2 cores or more) gives
 * the process that takes Slack's requests (the bare app, the bot's web process, the bot's one
 * process) core 0 to itself and binds everything else (this process, the fakes, the worker
 * process, Redis) to core 1, as when the web role runs on a machine of its own. `--quick` runs a short version (5-second
 * loads, 500 requests in flight, 1 repeat): about a minute; the defaults take about 11 minutes.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startMintlifyFake } from '../test/fakes/mintlifyFake.js';
import { startSlackFake } from '../test/fakes/slackFake.js';
import { signRequest } from '../test/support/slackRequests.js';
import {
  argument,
  cpuSeconds,
  dropNamespace,
  entryPoints,
  LISTENING,
  type NodeProcess,
  numbers,
  percentile,
  portOf,
  REDIS_URL,
  pinTo,
  redisPid,
  startNode,
  WORKER_RUNNING,
} from './support/processes.js';

const BOT_TOKEN = 'xoxb-bench-ack-0000';
const SIGNING_SECRET = 'bench-signing-secret';
const API_KEY = 'mint_bench_ack_key';
const PROJECT_ID = 'proj_bench';
const TSX = ['--import', 'tsx'];
type Entry = ReturnType<typeof entryPoints>;
/** What the bot acknowledges a queued instruction with; anything else means it was not queued. */
const STARTING = 'Starting a docs agent job';
/** How long the bench waits for the work of one load to be done before it reports it unfinished. */
const WORK_TIMEOUT_MS = 180_000;

type Setup = 'bare' | 'queued' | 'web' | 'split' | 'single';
const SETUP_NAMES: Record<Setup, string> = {
  bare: 'bare Bolt app (ack only)',
  queued: 'bare Bolt app + BullMQ add before the ack',
  web: 'bot: SERVICES=web alone (no worker)',
  split: 'bot: SERVICES=web + a worker process',
  single: 'bot: one process (web,worker)',
};

/** The bot's setups: their acks say whether the command was queued. */
const isBot = (setup: Setup) => setup === 'web' || setup === 'split' || setup === 'single';
/** The setups whose work is done (and waited for): the bot with its worker. */
const doesWork = (setup: Setup) => setup === 'split' || setup === 'single';

interface FakeUrls {
  slackApiUrl: string;
  responseUrl: string;
  mintlifyUrl: string;
}

/** What the fakes have seen of the bot's work so far. */
interface Work {
  /** Jobs created at Mintlify. */
  created: number;
  /**
   * Job cards posted (a start's last step; a budget note through the response URL comes only when
   * few agent uses are left, so it cannot stand for every start).
   */
  cards: number;
  /** When the last of each came (Date.now()). */
  lastAt: number;
}

/** Child: both fakes, answering after a realistic delay, counting the bot's work. */
async function serveFakes(latencyMs: number): Promise<void> {
  const mintlify = await startMintlifyFake({
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    latencyMs,
    // The bench measures the bot, well past the service's hourly limits.
    rateLimits: false,
  });
  const slack = await startSlackFake({ botToken: BOT_TOKEN, latencyMs });
  const work: Work = { created: 0, cards: 0, lastAt: 0 };
  mintlify.onAnswer((request, answer) => {
    if (request.operation !== 'createJob' || answer.status >= 300) return;
    work.created += 1;
    work.lastAt = Date.now();
  });
  slack.onCall((call) => {
    const mark = (call.args.metadata as { event_type?: string } | undefined)?.event_type;
    if (call.method !== 'chat.postMessage' || mark !== 'docs_agent_job') return;
    work.cards += 1;
    work.lastAt = Date.now();
  });
  // Count and forget: the fakes' logs would otherwise grow with every request of the run.
  setInterval(() => {
    mintlify.requests.splice(0);
    slack.calls.splice(0);
  }, 1_000).unref();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'work') process.send?.({ type: 'work', work });
  });
  process.on('disconnect', () => process.exit(0));
  const urls: FakeUrls = {
    slackApiUrl: slack.apiUrl,
    responseUrl: slack.responseUrl('bench'),
    mintlifyUrl: mintlify.url,
  };
  process.send?.({ type: 'ready', urls });
}

/** The app under test, started: its URL and its processes (one, or the bot's web and worker). */
interface Target {
  url: string;
  processes: NodeProcess[];
}

/** `--pin`: the process taking Slack's requests gets core 0 to itself, the rest shares core 1. */
const PIN = process.argv.includes('--pin');

async function startTarget(setup: Setup, entry: Entry, urls: FakeUrls, namespace: string): Promise<Target> {
  const target = await startApp(setup, entry, urls, namespace);
  if (PIN) {
    const [receiver, ...others] = target.processes;
    if (receiver) pinTo(receiver.pid, '0');
    for (const other of others) pinTo(other.pid, '1');
  }
  return target;
}

async function startApp(setup: Setup, entry: Entry, urls: FakeUrls, namespace: string): Promise<Target> {
  // BENCH_CPU_PROFILE=<dir>: every process of the app writes a CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROFILE;
  const start = (file: string, env: Record<string, string>) => {
    const { args, execArgv } = entry(file);
    return startNode(args, env, [
      ...execArgv,
      ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    ]);
  };
  const slackEnv = {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: urls.slackApiUrl,
    PORT: '0',
  };
  if (setup === 'bare' || setup === 'queued') {
    const bare =
      setup === 'bare'
        ? start('bench/support/bareBoltApp.ts', slackEnv)
        : start('bench/support/queuedBoltApp.ts', { ...slackEnv, REDIS_URL, STORE_NAMESPACE: namespace });
    const { line } = await bare.line(LISTENING);
    return { url: `http://127.0.0.1:${portOf(line)}`, processes: [bare] };
  }
  // As an operator configures it (README, "Run it"); LOG_LEVEL stays at its default, info.
  const botEnv = {
    ...slackEnv,
    MINTLIFY_API_KEY: API_KEY,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: urls.mintlifyUrl,
    REDIS_URL,
    STORE_NAMESPACE: namespace,
  };
  if (setup === 'single') {
    const bot = start('src/main.ts', botEnv);
    const { line } = await bot.line(LISTENING);
    return { url: `http://127.0.0.1:${portOf(line)}`, processes: [bot] };
  }
  if (setup === 'web') {
    const web = start('src/main.ts', { ...botEnv, SERVICES: 'web' });
    const { line } = await web.line(LISTENING);
    return { url: `http://127.0.0.1:${portOf(line)}`, processes: [web] };
  }
  const worker = start('src/main.ts', { ...botEnv, SERVICES: 'worker' });
  const web = start('src/main.ts', { ...botEnv, SERVICES: 'web' });
  const [{ line }] = await Promise.all([web.line(LISTENING), worker.line(WORKER_RUNNING)]);
  // The web process first: it takes Slack's requests.
  return { url: `http://127.0.0.1:${portOf(line)}`, processes: [web, worker] };
}

/** One run of one app under one load. */
interface Sample {
  latencies: number[];
  seconds: number;
  /** Answers other than HTTP 200. */
  errors: number;
  /** 200s that do not say the job is starting (the bot's "couldn't take that": the queue did not take it). */
  notQueued: number;
  /** The bot's work for this run: jobs created, their cards posted, and how long it took from the first request. */
  work?: { created: number; cards: number; seconds: number; afterLastAck: number };
  /** CPU used from the start of the load until its work was done, in % of one core: the app's processes, the fakes, Redis, this process. */
  cpu?: { app: number; fakes: number; redis: number; load: number };
}

/** CPU seconds so far of the app's processes, the fakes, Redis and this process (the load). */
function cpuNow(app: number[], fakes: number, redis: number) {
  const self = process.cpuUsage();
  return {
    app: app.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    fakes: cpuSeconds(fakes),
    redis: cpuSeconds(redis),
    load: (self.user + self.system) / 1e6,
  };
}

/** Every command has a response URL and a trigger of its own, as Slack gives. */
let commands = 0;

function slashCommand(urls: FakeUrls, channelPrefix: string) {
  commands += 1;
  const body = new URLSearchParams({
    command: '/docs-agent',
    text: `Document flag number ${commands}`,
    user_id: `U${commands % 50}`,
    // Spread over 100 channels, as a workspace's commands are (the Slack fake keeps each channel's history).
    channel_id: `${channelPrefix}${String(commands % 100).padStart(3, '0')}`,
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    response_url: `${urls.responseUrl}-${commands}`,
    trigger_id: `${commands}.1.bench`,
  }).toString();
  return body;
}

interface Load {
  /** "20 req/s offered" (open loop) or "200 in flight" (closed loop). */
  name: string;
  run(send: () => Promise<Answer>): Promise<Omit<Sample, 'work'>>;
}

interface Answer {
  ms: number;
  ok: boolean;
  queued: boolean;
}

/** One signed slash command: its latency until the ack, in ms, and what the ack said. */
async function sendCommand(url: string, body: string, dispatcher: Agent): Promise<Answer> {
  const started = performance.now();
  const response = await request(`${url}/slack/events`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...signRequest(SIGNING_SECRET, body) },
    body,
  });
  const answer = await response.body.text();
  return {
    ms: performance.now() - started,
    ok: response.statusCode === 200,
    queued: answer.includes(STARTING),
  };
}

function tally() {
  const latencies: number[] = [];
  let errors = 0;
  let notQueued = 0;
  return {
    add(answer: Answer) {
      latencies.push(answer.ms);
      if (!answer.ok) errors += 1;
      else if (!answer.queued) notQueued += 1;
    },
    sample: (seconds: number) => ({ latencies, seconds, errors, notQueued }),
  };
}

/** Closed loop: `concurrency` requests in flight at all times, `count` in all (each app's saturation). */
function closedLoop(concurrency: number, count: number): Load {
  return {
    name: `${concurrency} in flight`,
    async run(send) {
      const counts = tally();
      let sent = 0;
      const startedAt = performance.now();
      const loop = async () => {
        while (sent < count) {
          sent += 1;
          counts.add(await send());
        }
      };
      await Promise.all(Array.from({ length: concurrency }, loop));
      return counts.sample((performance.now() - startedAt) / 1000);
    },
  };
}

/** Open loop: requests start at a fixed rate whatever the answers do, as Slack's traffic does. */
function openLoop(perSecond: number, count: number): Load {
  return {
    name: `${perSecond} req/s offered`,
    async run(send) {
      const counts = tally();
      const sends: Array<Promise<void>> = [];
      const startedAt = performance.now();
      for (let n = 0; n < count; n += 1) {
        const wait = startedAt + (n * 1000) / perSecond - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        sends.push(send().then(counts.add));
      }
      await Promise.all(sends);
      return counts.sample((performance.now() - startedAt) / 1000);
    },
  };
}

class Fakes {
  private constructor(
    readonly child: ChildProcess,
    readonly urls: FakeUrls,
    readonly redisPid: number,
  ) {}

  static async start(latencyMs: number): Promise<Fakes> {
    const child = fork(fileURLToPath(import.meta.url), ['--fakes', String(latencyMs)], { execArgv: TSX });
    const [message] = (await once(child, 'message')) as [{ urls: FakeUrls }];
    return new Fakes(child, message.urls, await redisPid());
  }

  async work(): Promise<Work> {
    const reply = once(this.child, 'message');
    this.child.send({ type: 'work' });
    const [message] = (await reply) as [{ work: Work }];
    return message.work;
  }

  /** Waits until `created` jobs and `cards` cards (in all) have reached the fakes, or the time runs out. */
  async settled(expected: { created: number; cards: number }, timeoutMs: number): Promise<Work> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const work = await this.work();
      const done = work.created >= expected.created && work.cards >= expected.cards;
      if (done || Date.now() > deadline) return work;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  stop(): void {
    this.child.disconnect();
  }
}

/** Says so when the work of every queued command did not reach the fakes in time, with the app's last lines. */
function unsettled(
  what: string,
  setup: Setup,
  work: Work,
  expected: { created: number; cards: number },
  processes: Array<{ tail(): string }>,
): void {
  if (work.created >= expected.created && work.cards >= expected.cards) return;
  process.stderr.write(
    `${what}, ${setup}: work not done within ${WORK_TIMEOUT_MS / 1000} s: ` +
      `${expected.created - work.created} job(s) not created, ${expected.cards - work.cards} card(s) not posted. ` +
      `The app's last lines:\n${processes.map((p) => p.tail()).join('\n---\n')}\n`,
  );
}

/** One app, fresh, under one load: warm-up, the load, then (the bot) the wait for its work. */
async function runOnce(
  setup: Setup,
  entry: Entry,
  load: Load,
  fakes: Fakes,
  namespace: string,
  instance: number,
) {
  const target = await startTarget(setup, entry, fakes.urls, namespace);
  const cpu = () =>
    cpuNow(
      target.processes.map((p) => p.pid),
      fakes.child.pid ?? 0,
      fakes.redisPid,
    );
  const channelPrefix = `C${String(instance).padStart(4, '0')}`;
  const dispatcher = new Agent({ connections: 256, pipelining: 1 });
  const send = () => sendCommand(target.url, slashCommand(fakes.urls, channelPrefix), dispatcher);
  try {
    const before = await fakes.work();
    // A warm-up of 100 commands, whose work is done before the load starts.
    const warmUp = await closedLoop(10, 100).run(send);
    const warmQueued = warmUp.latencies.length - warmUp.errors - warmUp.notQueued;
    const bot = doesWork(setup);
    const warmExpected = { created: before.created + warmQueued, cards: before.cards + warmQueued };
    const warm = bot ? await fakes.settled(warmExpected, WORK_TIMEOUT_MS) : before;
    if (bot) unsettled('warm-up', setup, warm, warmExpected, target.processes);
    const startedAt = Date.now();
    const cpuBefore = cpu();
    const sample: Sample = await load.run(send);
    const lastAckAt = Date.now();
    if (bot) {
      const queued = sample.latencies.length - sample.errors - sample.notQueued;
      const expected = { created: warm.created + queued, cards: warm.cards + queued };
      const work = await fakes.settled(expected, WORK_TIMEOUT_MS);
      unsettled(load.name, setup, work, expected, target.processes);
      sample.work = {
        created: work.created - warm.created,
        cards: work.cards - warm.cards,
        seconds: (work.lastAt - startedAt) / 1000,
        afterLastAck: Math.max(0, (work.lastAt - lastAckAt) / 1000),
      };
    }
    const cpuAfter = cpu();
    const seconds = (Date.now() - startedAt) / 1000;
    const share = (pick: (c: typeof cpuAfter) => number) =>
      ((pick(cpuAfter) - pick(cpuBefore)) / seconds) * 100;
    sample.cpu = {
      app: share((c) => c.app),
      fakes: share((c) => c.fakes),
      redis: share((c) => c.redis),
      load: share((c) => c.load),
    };
    return sample;
  } finally {
    await dispatcher.close();
    await Promise.all(target.processes.map((process_) => process_.stop()));
  }
}

interface Row {
  load: string;
  setup: Setup;
  samples: Sample[];
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rates = numbers(argument('rates', '20,100'));
  const seconds = Number(argument('seconds', quick ? '5' : '20'));
  const levels = numbers(argument('concurrency', '200'));
  const requests = Number(argument('requests', quick ? '500' : '2000'));
  const repeats = Number(argument('repeats', quick ? '1' : '2'));
  const latencyMs = Number(argument('latency', '80'));
  const setups = argument('setups', 'bare,queued,web,split,single').split(',').filter(Boolean) as Setup[];
  const loader = argument('loader', 'js');
  const entry = entryPoints(loader);
  const run = `docs-agent-bench:ack:${randomUUID().slice(0, 8)}`;
  const startedAt = Date.now();

  const fakes = await Fakes.start(latencyMs);
  if (PIN) {
    for (const pid of [process.pid, fakes.child.pid ?? 0, fakes.redisPid]) pinTo(pid, '1');
  }
  const loads = [
    ...rates.map((rate) => openLoop(rate, rate * seconds)),
    ...levels.map((level) => closedLoop(level, requests)),
  ];
  const rows: Row[] = [];
  let instance = 0;
  // Stopped early: the namespace goes too (the processes this bench started are killed on exit).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void dropNamespace(run).finally(() => process.exit(130)));
  }
  try {
    for (const load of loads) {
      const bySetup = new Map<Setup, Sample[]>(setups.map((setup) => [setup, []]));
      // Side by side: every app under the same load, each in fresh processes, `repeats` times over
      // taking turns, so that a slow spell of this shared machine falls on all of them.
      for (let repeat = 0; repeat < repeats; repeat += 1) {
        for (const setup of setups) {
          instance += 1;
          const namespace = `${run}:${instance}`;
          const sample = await runOnce(setup, entry, load, fakes, namespace, instance);
          await dropNamespace(namespace);
          bySetup.get(setup)?.push(sample);
          process.stderr.write(`${load.name}, ${setup}, run ${repeat + 1}: ${summary(sample)}\n`);
        }
      }
      for (const setup of setups) rows.push({ load: load.name, setup, samples: bySetup.get(setup) ?? [] });
    }
  } finally {
    fakes.stop();
    await dropNamespace(run);
    // Redis is the machine's: it gets every core back.
    if (PIN) pinTo(fakes.redisPid, `0-${cpus().length - 1}`);
  }
  report(rows, { latencyMs, repeats, loader, minutes: (Date.now() - startedAt) / 60_000 });
}

function summary(sample: Sample): string {
  const sorted = [...sample.latencies].sort((a, b) => a - b);
  const work = sample.work
    ? `, ${sample.work.created} jobs created, ${sample.work.cards} cards posted, last ${sample.work.afterLastAck.toFixed(1)} s after the last ack`
    : '';
  const cpu = sample.cpu
    ? `; CPU (% of one core) app ${sample.cpu.app.toFixed(0)}, fakes ${sample.cpu.fakes.toFixed(0)}, Redis ${sample.cpu.redis.toFixed(0)}, load ${sample.cpu.load.toFixed(0)}`
    : '';
  return `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms${work}${cpu}`;
}

function report(
  rows: Row[],
  run: { latencyMs: number; repeats: number; loader: string; minutes: number },
): void {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const pooled = (samples: Sample[]) => samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  console.log(
    `\n/docs-agent ack latency; Slack and Mintlify fakes answer after ${run.latencyMs} ms; ${run.repeats} run(s) per app and load, pooled; ${run.loader === 'js' ? 'compiled JavaScript' : 'from source through tsx'}; ${PIN ? 'pinned (--pin: the app taking requests on core 0, the rest on core 1); ' : ''}${run.minutes.toFixed(1)} min in all`,
  );
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}\n`,
  );
  console.log(
    '| load | app | requests | p50 | p99 | max | p99 of each run | acks/s | non-200 | not queued | jobs created | work done/s | work done after the last ack | CPU: app / fakes / Redis / load | p99 vs bare |',
  );
  console.log('|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|');
  for (const row of rows) {
    const all = pooled(row.samples);
    const bare = rows.find((other) => other.load === row.load && other.setup === 'bare');
    const ratio =
      bare && row !== bare
        ? `${(percentile(all, 99) / percentile(pooled(bare.samples), 99)).toFixed(2)}x`
        : '';
    const sum = (pick: (sample: Sample) => number) =>
      row.samples.reduce((total, sample) => total + pick(sample), 0);
    const works = row.samples.flatMap((sample) => (sample.work ? [sample.work] : []));
    const created = works.reduce((total, work) => total + work.created, 0);
    const workRate = works.length
      ? works.reduce((total, work) => total + work.created / work.seconds, 0) / works.length
      : undefined;
    const after = works.length ? Math.max(...works.map((work) => work.afterLastAck)) : undefined;
    const cpus_ = row.samples.flatMap((sample) => (sample.cpu ? [sample.cpu] : []));
    const meanCpu = (pick: (c: NonNullable<Sample['cpu']>) => number) =>
      `${(cpus_.reduce((total, c) => total + pick(c), 0) / Math.max(1, cpus_.length)).toFixed(0)} %`;
    const cpuCell = cpus_.length
      ? [
          meanCpu((c) => c.app),
          meanCpu((c) => c.fakes),
          meanCpu((c) => c.redis),
          meanCpu((c) => c.load),
        ].join(' / ')
      : '';
    console.log(
      `| ${row.load} | ${SETUP_NAMES[row.setup]} | ${all.length} | ${ms(percentile(all, 50))} | ${ms(percentile(all, 99))} | ${ms(all.at(-1) ?? Number.NaN)} | ${row.samples
        .map((sample) =>
          percentile(
            [...sample.latencies].sort((a, b) => a - b),
            99,
          ).toFixed(1),
        )
        .join(
          ' / ',
        )} | ${(all.length / sum((sample) => sample.seconds)).toFixed(0)} | ${sum((sample) => sample.errors)} | ${isBot(row.setup) ? sum((sample) => sample.notQueued) : ''} | ${works.length ? created : ''} | ${workRate?.toFixed(0) ?? ''} | ${after === undefined ? '' : `${after.toFixed(1)} s`} | ${cpuCell} | ${ratio} |`,
    );
  }
}

if (process.argv.includes('--fakes')) await serveFakes(Number(argument('fakes', '80')));
else {
  await main();
  process.exit(0);
}
