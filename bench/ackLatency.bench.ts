/**
 * Acknowledgement latency under load: signed slash commands and thread-reply events at rising
 * concurrency against the bot in HTTP mode, side by side in the same run with a bare Bolt app that
 * only calls ack() (the floor). Slack gives an app 3 s to acknowledge.
 *
 *   npx tsx bench/ackLatency.bench.ts [--requests 2000] [--rates 20,100] [--concurrency 10,50,200] [--latency 80] [--repeats 3]
 *   npm run bench:ack
 *
 * Three processes: the Slack and Mintlify fakes (answering after `--latency` ms, like the real
 * services over the internet), the app under test (the real bot on Redis, or the bare app), and this
 * one, which sends the requests and times each until its HTTP answer (the ack).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { cpus, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';
import { Agent, request } from 'undici';
import { createDocsAgent } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startMintlifyFake } from '../test/fakes/mintlifyFake.js';
import { startSlackFake } from '../test/fakes/slackFake.js';
import { signRequest } from '../test/support/slackRequests.js';

const BOT_TOKEN = 'xoxb-bench-ack-0000';
const SIGNING_SECRET = 'bench-signing-secret';
const API_KEY = 'mint_bench_ack_key';
const PROJECT_ID = 'proj_bench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

interface FakeUrls {
  slackApiUrl: string;
  responseUrl: string;
  mintlifyUrl: string;
}

/** Child: both fakes, answering after a realistic delay. */
async function serveFakes(latencyMs: number): Promise<void> {
  const mintlify = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID, latencyMs });
  const slack = await startSlackFake({ botToken: BOT_TOKEN, latencyMs });
  const urls: FakeUrls = {
    slackApiUrl: slack.apiUrl,
    responseUrl: slack.responseUrl('bench'),
    mintlifyUrl: mintlify.url,
  };
  // Every accepted request ends in one Mintlify call: a job created, or a follow-up sent.
  let workDone = 0;
  let lastWorkAt = 0;
  mintlify.onAnswer((request) => {
    if (request.operation !== 'createJob' && request.operation !== 'sendMessage') return;
    workDone += 1;
    lastWorkAt = Date.now();
  });
  // The main process asks for the ts of the next job card, to send thread replies into its thread.
  process.on('message', (message: { type: string; since: number }) => {
    if (message.type === 'work') process.send?.({ type: 'work', done: workDone, lastAt: lastWorkAt });
    if (message.type !== 'nextCard') return;
    // The card, then the answer to the person, which comes once the job's record knows its thread.
    const since = (call: { at: number }) => call.at >= message.since;
    void slack
      .waitForCall('chat.postMessage', (call) => since(call) && call.response.ok === true, 10_000)
      .then(async (card) => {
        await slack.waitForCall('response_url', since, 10_000);
        process.send?.({ type: 'card', ts: card.response.ts });
      });
  });
  process.send?.({ type: 'ready', urls });
}

/** Child: the app under test, on a free port. */
async function serveTarget(kind: 'bot' | 'bare', urls: FakeUrls): Promise<void> {
  const silent = createLogger({ level: 'error', secrets: [], sink: () => {} });
  let port: number | undefined;
  if (kind === 'bot') {
    const config = loadConfig({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: urls.slackApiUrl,
      MINTLIFY_API_KEY: API_KEY,
      MINTLIFY_PROJECT_ID: PROJECT_ID,
      MINTLIFY_API_URL: urls.mintlifyUrl,
      REDIS_URL,
      STORE_NAMESPACE: `docs-agent-bench:ack:${process.pid}`,
      PORT: '0',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
    });
    // As main.ts runs it: both roles in this process (SERVICES=web,worker).
    const bot = await createDocsAgent(config, { logger: silent });
    ({ port } = await bot.start());
    process.once('SIGTERM', () => void bot.stop().finally(() => process.exit(0)));
  } else {
    const receiver = new HTTPReceiver({
      signingSecret: SIGNING_SECRET,
      endpoints: '/slack/events',
      logger: silent,
    });
    const app = new App({
      token: BOT_TOKEN,
      receiver,
      logger: silent,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: urls.slackApiUrl },
    });
    app.command('/docs-agent', async ({ ack }) => ack());
    app.event('message', async () => {});
    const server = (await app.start(0)) as unknown as { address(): { port: number } };
    port = server.address().port;
  }
  process.send?.({ type: 'ready', port });
}

/** One run of one app under one load. */
interface Sample {
  /** "10 in flight" (closed loop) or "100 req/s offered" (open loop). */
  mode: string;
  latencies: number[];
  seconds: number;
  errors: number;
  /** Commands answered "too busy" (the bot's load shedding), not started. */
  refused: number;
}

/** Every run of one app under one load, pooled. */
interface RunResult {
  target: string;
  mode: string;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** The p99 of each run on its own, to show how much runs differ. */
  runP99s: number[];
  perSecond: number;
  errors: number;
  refused: number;
  /** Accepted requests whose work (the Mintlify call) was done, per second from the run's start. */
  workPerSecond?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

const sorted = (values: number[]) => [...values].sort((x, y) => x - y);

function pooled(target: string, samples: Sample[], workPerSecond: number[]): RunResult {
  const all = sorted(samples.flatMap((sample) => sample.latencies));
  const sum = (pick: (sample: Sample) => number) =>
    samples.reduce((total, sample) => total + pick(sample), 0);
  return {
    target,
    mode: samples[0]?.mode ?? '',
    requests: all.length,
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    max: all.at(-1) ?? Number.NaN,
    runP99s: samples.map((sample) => percentile(sorted(sample.latencies), 99)),
    perSecond: all.length / sum((sample) => sample.seconds),
    errors: sum((sample) => sample.errors),
    refused: sum((sample) => sample.refused),
    ...(workPerSecond.length === samples.length
      ? { workPerSecond: workPerSecond.reduce((x, y) => x + y, 0) / workPerSecond.length }
      : {}),
  };
}

/** One signed request (a slash command or a thread reply): its latency until the ack, in ms, whether it was a 200, and whether the bot refused it as too busy. */
async function send(url: string, urls: FakeUrls, threadTs: string, n: number, dispatcher: Agent) {
  const { body, contentType } = n % 2 === 0 ? slashCommand(n, urls) : threadReply(n, threadTs);
  const started = performance.now();
  const response = await request(`${url}/slack/events`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': contentType, ...signRequest(SIGNING_SECRET, body) },
    body,
  });
  const answer = await response.body.text();
  return {
    ms: performance.now() - started,
    ok: response.statusCode === 200,
    refused: answer.includes('very busy'),
  };
}

/** Closed loop: `concurrency` requests in flight at all times, `count` in all (the app's saturation). */
async function loadAtConcurrency(
  url: string,
  urls: FakeUrls,
  threadTs: string,
  count: number,
  concurrency: number,
): Promise<Sample> {
  const dispatcher = new Agent({ connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let refused = 0;
  const startedAt = performance.now();
  const worker = async () => {
    while (next < count) {
      const answer = await send(url, urls, threadTs, next++, dispatcher);
      latencies.push(answer.ms);
      if (!answer.ok) errors += 1;
      if (answer.refused) refused += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - startedAt) / 1000;
  await dispatcher.close();
  return { mode: `${concurrency} in flight`, latencies, seconds, errors, refused };
}

/** Open loop: requests start at a fixed rate whatever the answers do, as Slack's traffic does. */
async function loadAtRate(
  url: string,
  urls: FakeUrls,
  threadTs: string,
  count: number,
  perSecond: number,
): Promise<Sample> {
  const dispatcher = new Agent({ connections: 256, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let refused = 0;
  const startedAt = performance.now();
  const sends: Array<Promise<void>> = [];
  for (let n = 0; n < count; n += 1) {
    const due = startedAt + (n * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(
      send(url, urls, threadTs, n, dispatcher).then((answer) => {
        latencies.push(answer.ms);
        if (!answer.ok) errors += 1;
        if (answer.refused) refused += 1;
      }),
    );
  }
  await Promise.all(sends);
  const seconds = (performance.now() - startedAt) / 1000;
  await dispatcher.close();
  return { mode: `${perSecond} req/s offered`, latencies, seconds, errors, refused };
}

/** Every command has a response URL of its own, as Slack gives (each takes 5 answers). */
let commands = 0;

function slashCommand(n: number, urls: FakeUrls) {
  commands += 1;
  const body = new URLSearchParams({
    command: '/docs-agent',
    text: `Document flag number ${n}`,
    user_id: `U${n % 50}`,
    channel_id: 'C0BENCH',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    response_url: `${urls.responseUrl}-${commands}`,
    trigger_id: `${n}.1.bench`,
  }).toString();
  return { body, contentType: 'application/x-www-form-urlencoded' };
}

/** Every thread reply of a bench is a new message (the bot acts once on each message ts). */
let replies = 0;

function threadReply(n: number, threadTs: string) {
  replies += 1;
  const ts = `${1_800_000_000 + replies}.000100`;
  const body = JSON.stringify({
    type: 'event_callback',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    event_id: `Ev${replies}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: 'message',
      channel: 'C0BENCH',
      user: `U${n % 50}`,
      text: `Also cover case ${n}`,
      ts,
      thread_ts: threadTs,
    },
  });
  return { body, contentType: 'application/json' };
}

function child(
  role: string,
  args: string[],
): Promise<{ process: ChildProcess; message: Record<string, unknown> }> {
  // BENCH_CPU_PROFILE=dir writes a CPU profile of the bot's process there, to see where its time goes.
  const profile =
    role === 'bot' && process.env.BENCH_CPU_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
      : [];
  const process_ = fork(fileURLToPath(import.meta.url), [role, ...args], {
    execArgv: ['--import', 'tsx', ...profile],
  });
  return once(process_, 'message').then(([message]) => ({
    process: process_,
    message: message as Record<string, unknown>,
  }));
}

async function main(): Promise<void> {
  const count = Number(argument('requests', '2000'));
  const levels = argument('concurrency', '10,50,200').split(',').filter(Boolean).map(Number);
  const rates = argument('rates', '20,100').split(',').filter(Boolean).map(Number);
  const latencyMs = argument('latency', '80');
  const repeats = Number(argument('repeats', '3'));
  const fakes = await child('fakes', [latencyMs]);
  // The fakes stand for Slack and Mintlify, whose CPU is not the bot's machine's in production: on
  // this one they take second place to the app under test (and to the load), floor and bot alike.
  if (fakes.process.pid) setPriority(fakes.process.pid, 10);
  const urls = fakes.message.urls as FakeUrls;
  const results: RunResult[] = [];
  let expectedWork = 0; // requests whose Mintlify call the fakes should have seen by now
  const runs = [
    ...rates.map((rate) => ({ run: loadAtRate, level: rate, count: rate * 20 })),
    ...levels.map((level) => ({ run: loadAtConcurrency, level, count })),
  ];

  for (const { run, level, count: requests } of runs) {
    const samples = { bare: [] as Sample[], bot: [] as Sample[] };
    const workPerSecond: number[] = [];
    // Side by side: the floor, then the bot, under the same load, each in a fresh process; `repeats`
    // times over, taking turns, so a slow spell of this shared machine falls on both.
    for (let repeat = 0; repeat < repeats; repeat += 1) {
      for (const target of ['bare', 'bot'] as const) {
        const app = await child(target, [JSON.stringify(urls)]);
        const url = `http://127.0.0.1:${app.message.port}`;
        // One job first, so thread replies land in a job's thread (the bot sends them as follow-ups).
        const threadTs = target === 'bot' ? await firstCardTs(url, urls, fakes.process) : '1700000000.000100';
        const warmUp = await loadAtConcurrency(url, urls, threadTs, 100, 10);
        if (target === 'bot') {
          expectedWork += 1 + warmUp.latencies.length - warmUp.refused; // the first job, and the warm-up's
          await workSettled(fakes.process, expectedWork);
        }
        const startedAt = Date.now();
        const sample = await run(url, urls, threadTs, requests, level);
        samples[target].push(sample);
        if (target === 'bot') {
          const accepted = sample.latencies.length - sample.refused;
          expectedWork += accepted;
          const work = await workSettled(fakes.process, expectedWork);
          if (work.done >= expectedWork) workPerSecond.push(accepted / ((work.lastAt - startedAt) / 1000));
        }
        app.process.kill('SIGTERM');
        await once(app.process, 'exit');
      }
    }
    results.push(
      pooled('bare Bolt (ack only)', samples.bare, []),
      pooled('docs-agent', samples.bot, workPerSecond),
    );
  }
  fakes.process.kill('SIGKILL');
  report(results, latencyMs);
}

/**
 * Waits (up to 60 s) until `expected` requests' work has reached Mintlify, then says how much had
 * and when the last arrived. The bot acknowledges first: its work may finish well after the acks.
 */
async function workSettled(fakes: ChildProcess, expected: number): Promise<{ done: number; lastAt: number }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const reply = once(fakes, 'message');
    fakes.send({ type: 'work' });
    const [work] = (await reply) as [{ done: number; lastAt: number }];
    if (work.done >= expected || Date.now() > deadline) return work;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts one job through the bot and returns its card's ts, as the Slack fake saw it posted. */
async function firstCardTs(url: string, urls: FakeUrls, fakes: ChildProcess): Promise<string> {
  const card = once(fakes, 'message');
  fakes.send({ type: 'nextCard', since: Date.now() });
  const { body, contentType } = slashCommand(0, urls);
  await request(`${url}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...signRequest(SIGNING_SECRET, body) },
    body,
  }).then((response) => response.body.dump());
  const [message] = (await card) as [{ ts: string }];
  return message.ts;
}

function report(results: RunResult[], latencyMs: string): void {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(
    `\nack latency (half /docs-agent, half thread replies); Slack and Mintlify fakes answer after ${latencyMs} ms`,
  );
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}\n`,
  );
  console.log(
    '| load | app | requests | p50 | p99 | max | p99 of each run | acks/s | non-200 | refused busy | work done/s | p99 vs floor |',
  );
  console.log('|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const floor = results.find((other) => other.mode === r.mode && other.target.startsWith('bare'));
    const ratio = floor && r !== floor ? `${(r.p99 / floor.p99).toFixed(2)}x` : '';
    const bare = r.target.startsWith('bare');
    console.log(
      `| ${r.mode} | ${r.target} | ${r.requests} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.runP99s.map((p99) => p99.toFixed(1)).join(' / ')} | ${r.perSecond.toFixed(0)} | ${r.errors} | ${bare ? '' : r.refused} | ${r.workPerSecond?.toFixed(0) ?? ''} | ${ratio} |`,
    );
  }
}

const [role, arg] = process.argv.slice(2);
if (role === 'fakes') await serveFakes(Number(arg));
else if (role === 'bot' || role === 'bare') await serveTarget(role, JSON.parse(arg ?? '{}') as FakeUrls);
else await main();
