/**
 * How the weekly digest reads a large visitors export: wall time against the floor set by the
 * service's latency (pages x latency, since pages are read one after another), and memory, which
 * must stay flat as the number of paths grows because only the top N rows are kept.
 *
 *   npx tsx bench/digest.bench.ts [--latency 50] [--sizes 10000,100000]
 *   npm run bench:digest
 *
 * The Mintlify fake runs in a child process, so its own copy of the rows never counts against the
 * digest's memory. A control run keeps every row (what a naive digest would do) to show that the
 * measurement does see memory that grows with the site.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { collectVisitors, PAGE_SIZE } from '../src/digest/collectVisitors.js';
import { MintlifyClient, type VisitorsRow } from '../src/mintlify/index.js';
import { startMintlifyFake } from '../test/fakes/mintlifyFake.js';

const API_KEY = 'mint_bench_key_0000';
const PROJECT_ID = 'proj_bench';
const PERIOD = { dateFrom: '2025-03-10', dateTo: '2025-03-17' };
const TOP = 10;
const MB = 1024 * 1024;

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

/** Paths of realistic length, in no order; `/guides/the-most-read-page` is planted on top. */
function siteRows(count: number): VisitorsRow[] {
  return Array.from({ length: count }, (_, i) => {
    if (i === Math.floor(count / 2))
      return { path: '/guides/the-most-read-page', human: 90_000, ai: 9_000, total: 95_000 };
    const human = (i * 7919) % 5_000;
    const ai = (i * 104_729) % 700;
    return {
      path: `/section-${i % 40}/topic-${(i * 31) % 997}/page-${i}`,
      human,
      ai,
      total: human + ai - (i % 5),
    };
  });
}

/** The child: the Mintlify fake, serving `count` rows with `latencyMs` before every answer. */
async function serveFake(count: number, latencyMs: number): Promise<void> {
  const fake = await startMintlifyFake({
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    latencyMs,
    // The bench measures the bot, well past the service's hourly limits.
    rateLimits: false,
  });
  fake.setVisitors(siteRows(count), { human: 1_000_000, ai: 120_000, total: 1_080_000 });
  process.send?.({ url: fake.url });
  process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
}

async function serve(count: number, latencyMs: number): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', String(count), String(latencyMs)], {
    execArgv: process.execArgv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the fake exited (${code})`)));
  });
  return { url, child };
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Result {
  mode: 'digest (top 10)' | 'control: keep every row';
  paths: number;
  pages: number;
  latencyMs: number;
  wallMs: number;
  floorMs: number;
  peakHeapMb: number;
  retainedMb: number;
  top: string;
}

async function measure(mode: Result['mode'], paths: number, latencyMs: number): Promise<Result> {
  const { url, child } = await serve(paths, latencyMs);
  const client = new MintlifyClient({ apiKey: API_KEY, baseUrl: url, userAgent: 'docs-agent-bench' });
  const kept: VisitorsRow[] = [];
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let pages = 0;
  const source = {
    visitorsPage: async (...args: Parameters<MintlifyClient['visitorsPage']>) => {
      const page = await client.visitorsPage(...args);
      pages += 1;
      if (mode !== 'digest (top 10)') kept.push(...page.visitors);
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      return page;
    },
  };
  const started = performance.now();
  const numbers = await collectVisitors(source, PROJECT_ID, PERIOD, {
    top: TOP,
    maxPages: 1_000,
    giveUpMs: 3_600_000,
  });
  const wallMs = performance.now() - started;
  gc();
  const retained = process.memoryUsage().heapUsed - baseline;
  if (numbers.pathCount !== paths || numbers.top[0]?.path !== '/guides/the-most-read-page') {
    throw new Error(`wrong result: ${numbers.pathCount} paths, top ${numbers.top[0]?.path}`);
  }
  await client.close();
  child.disconnect();
  const result: Result = {
    mode,
    paths,
    pages,
    latencyMs,
    wallMs: Math.round(wallMs),
    floorMs: pages * latencyMs,
    peakHeapMb: round((peak - baseline) / MB),
    retainedMb: round(Math.max(0, retained) / MB),
    top: `${numbers.top[0]?.path} (${numbers.top[0]?.total})`,
  };
  kept.length = 0;
  return result;
}

const round = (value: number) => Math.round(value * 10) / 10;

async function main(): Promise<void> {
  const latencyMs = Number(argument('latency', '50'));
  const sizes = argument('sizes', '10000,100000').split(',').map(Number);
  process.stdout.write(
    `digest benchmark: Node ${process.version}, ${cpus().length} cores, ${PAGE_SIZE} rows a page, latency ${latencyMs} ms\n`,
  );
  const results: Result[] = [];
  for (const paths of sizes) results.push(await measure('digest (top 10)', paths, latencyMs));
  // The control needs no latency: it only shows what keeping every row would cost in memory.
  for (const paths of sizes) results.push(await measure('control: keep every row', paths, 0));

  process.stdout.write(
    `${[
      '| run | paths | pages | latency | wall | floor (pages x latency) | overhead / page | peak heap growth | retained after GC |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...results.map(
        (r) =>
          `| ${r.mode} | ${r.paths.toLocaleString('en-US')} | ${r.pages} | ${r.latencyMs} ms | ${(r.wallMs / 1000).toFixed(2)} s | ${(r.floorMs / 1000).toFixed(2)} s | ${((r.wallMs - r.floorMs) / r.pages).toFixed(1)} ms | ${r.peakHeapMb} MB | ${r.retainedMb} MB |`,
      ),
    ].join('\n')}\n`,
  );
}

if (process.argv[2] === '--serve') await serveFake(Number(process.argv[3]), Number(process.argv[4]));
else await main();
