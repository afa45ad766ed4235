/**
 * Boot to listening of this tree's bot against an earlier commit's, head to head: the two compiled
 * bots are started in turns, so a machine whose speed drifts over minutes weighs on both alike.
 * This is how a change to boot is measured; `bench/boot.bench.ts` sets the bot against a bare app.
 *
 *   npx tsx bench/bootAgainst.bench.ts --commit <rev> [--runs 20] [--redis] [--slack-latency 0]
 *
 * The earlier commit is taken with `git archive` into node_modules/.cache/docs-agent-bench/ and
 * compiled with its own `npm run build` settings, on this tree's node_modules; this tree is
 * compiled the same way. Each bot runs with its default SERVICES, against the Slack fake in this
 * process (answering `--slack-latency` ms late, 0 by default); `--redis` gives each a Redis namespace of its own, deleted after it.
 */
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
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
  ROOT,
  startNode,
} from './support/processes.js';

/** `commit`'s src/, compiled as `npm run build` would; answers its entry file. */
function buildCommit(commit: string): string {
  const dir = join(ROOT, 'node_modules/.cache/docs-agent-bench', `against-${commit}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execSync(`git archive ${JSON.stringify(commit)} | tar -x -C ${JSON.stringify(dir)}`, { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: dir,
      stdio: 'inherit',
    },
  );
  return join(dir, 'dist/main.js');
}

async function main(): Promise<void> {
  const commit = argument('commit', '');
  if (!commit) throw new Error('--commit <rev> names the commit to compare with');
  const runs = Number(argument('runs', '20'));
  const redis = process.argv.includes('--redis');
  const rev = execFileSync('git', ['rev-parse', '--short', commit], { cwd: ROOT, encoding: 'utf8' }).trim();
  const bots = { [rev]: buildCommit(commit), 'this tree': entryPoints('js')('src/main.ts').args[0] ?? '' };

  // How long Slack takes to answer (auth.test, which the bot asks at start): 0 on loopback, some
  // 100-300 ms from a server to slack.com.
  const slackLatencyMs = Number(argument('slack-latency', '0'));
  const slack = await startSlackFake({ botToken: BOOT_BOT_TOKEN, latencyMs: slackLatencyMs });
  const env = bootEnv(slack.apiUrl).bot;
  const results = new Map<string, number[]>(Object.keys(bots).map((name) => [name, []]));
  try {
    for (let round = 0; round <= runs; round += 1) {
      for (const [name, file] of Object.entries(bots)) {
        const namespace = `docs-agent-bench:against:${round}:${name === rev ? 'before' : 'after'}`;
        const child = startNode([file], redis ? { ...env, REDIS_URL, STORE_NAMESPACE: namespace } : env);
        try {
          const { at } = await child.line(LISTENING);
          if (round > 0) results.get(name)?.push(at - child.spawnedAt);
        } finally {
          await child.stop();
          if (redis) await dropNamespace(namespace);
        }
      }
    }
  } finally {
    await slack.close();
  }

  console.log(
    `\nboot to listening, ${runs} fresh processes each in turns (after one uncounted round), ${redis ? 'with' : 'without'} Redis, Slack answering after ${slackLatencyMs} ms\n`,
  );
  console.log('| bot | boot p50 | boot min / max |');
  console.log('|---|---:|---:|');
  for (const [name, boots] of results) {
    console.log(
      `| ${name} | ${median(boots).toFixed(0)} ms | ${Math.min(...boots).toFixed(0)} / ${Math.max(...boots).toFixed(0)} ms |`,
    );
  }
}

await main();
process.exit(0);
