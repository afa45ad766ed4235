import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, type TestContext } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './botHarness.js';

/** The bot as an operator runs it: its own process (`node --import tsx src/main.ts`), configured by the environment. */
export interface BotProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): string;
  /**
   * Resolves with the bot's URL once it listens. Waits 40 s by default (as `printed`): the bot is
   * loaded through tsx, which took over 15 s when the whole suite started on a 2-core machine.
   */
  listening(timeoutMs?: number): Promise<string>;
  /** Resolves once the bot has printed a line matching `pattern`. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** The project's directory: the bot runs from it unless a test gives it another working directory. */
const PROJECT_DIR = resolve(import.meta.dirname, '../..');

export function runBot(env: Record<string, string>, options: { cwd?: string } = {}): BotProcess {
  // Elsewhere than the project's directory (where an operator's `.env` is read from), tsx and the entry by path.
  const [loader, entry] = options.cwd
    ? [
        pathToFileURL(join(PROJECT_DIR, 'node_modules/tsx/dist/loader.mjs')).href,
        join(PROJECT_DIR, 'src/main.ts'),
      ]
    : ['tsx', 'src/main.ts'];
  const child = spawn(process.execPath, ['--import', loader, entry], {
    // A developer's .env (for npm run dev) must not configure the bots the tests start.
    env: { PATH: process.env.PATH ?? '', ENV_FILE: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    exited,
    output: () => output,
    listening: (timeoutMs = 40_000) =>
      printed(/listening on port (\d+)/, timeoutMs).then(
        (line) => `http://127.0.0.1:${/listening on port (\d+)/.exec(line)?.[1]}`,
      ),
    printed,
  };

  function printed(pattern: RegExp, timeoutMs = 40_000): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = output.split('\n').find((candidate) => pattern.test(candidate));
        if (line !== undefined) done(() => resolve(line));
      };
      const done = (settle: () => void) => {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        child.stderr?.off('data', check);
        child.off('exit', exitedEarly);
        settle();
      };
      const exitedEarly = () =>
        done(() => reject(new Error(`the bot exited before printing ${pattern}:\n${output}`)));
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new Error(`the bot did not print ${pattern} within ${timeoutMs} ms:\n${output}`)),
          ),
        timeoutMs,
      );
      child.stdout?.on('data', check);
      child.stderr?.on('data', check);
      child.once('exit', exitedEarly);
      check();
    });
  }
}

/** The environment of a bot talking to these fakes (and to Redis at `redisUrl`, when given). */
export function botEnv(
  slack: SlackFake,
  mintlify: MintlifyFake,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string | undefined> = {
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    MINTLIFY_API_KEY: SECRETS.mintlifyKey,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: mintlify.url,
    PORT: '0',
    ...extra,
  };
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** What `processTests` and `testProcesses` hand a test: fakes to start, and bots to keep until its end. */
interface OwnProcesses {
  startFakes(): Promise<{ slack: SlackFake; mintlify: MintlifyFake }>;
  keep(bot: BotProcess): BotProcess;
}

/** Fakes and bots made through it, killed and closed by `end`. */
function ownProcesses(): OwnProcesses & { end(): Promise<void> } {
  const bots: BotProcess[] = [];
  const fakes: Array<SlackFake | MintlifyFake> = [];
  return {
    async startFakes() {
      const slack = await startSlackFake({ botToken: SECRETS.botToken });
      const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
      fakes.push(slack, mintlify);
      return { slack, mintlify };
    },
    keep(bot) {
      bots.push(bot);
      return bot;
    },
    async end() {
      for (const bot of bots.splice(0)) bot.child.kill('SIGKILL');
      await Promise.all(fakes.splice(0).map((fake) => fake.close()));
    },
  };
}

/**
 * For a file whose tests run the bot as a process: each test makes its fakes with `startFakes` and
 * hands its bots to `keep`; after each test the bots are killed and the fakes closed.
 */
export function processTests(options: { afterEach?: () => void } = {}): OwnProcesses {
  const { startFakes, keep, end } = ownProcesses();
  afterEach(async () => {
    options.afterEach?.();
    await end();
  });
  return { startFakes, keep };
}

/**
 * For a test that runs the bot as a process alongside others (`describe.concurrent`): its fakes
 * (`startFakes`) and the bots it hands to `keep` are its own, killed and closed when it ends.
 */
export function testProcesses(t: TestContext): OwnProcesses {
  const { startFakes, keep, end } = ownProcesses();
  t.onTestFinished(end);
  return { startFakes, keep };
}
