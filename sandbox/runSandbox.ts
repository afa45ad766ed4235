import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDocsAgent, type DocsAgent } from '../src/app.js';
import { type Config, loadConfig, type LogLevel, secretsOf } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { ChannelView } from './channelView.js';
import { parseSandboxCommand, SANDBOX_HELP, type SandboxCommand } from './sandboxCommands.js';
import { SANDBOX_MINTLIFY, type SimulatedMintlify, startSimulatedMintlify } from './simulatedMintlify.js';
import { SANDBOX_SLACK, type SimulatedSlack, startSimulatedSlack } from './simulatedSlack.js';
import { styleFor, Terminal } from './terminal.js';

/**
 * The sandbox: the real bot (`createDocsAgent`, its listeners, follower and digest, the in-memory
 * store) against a simulated Slack workspace and a simulated Mintlify on loopback, driven from a
 * terminal or a script. Nothing leaves this machine and nothing needs configuring.
 */

export interface SandboxOptions {
  input: Readable;
  output: Writable;
  /** How long a job (and each round after a follow-up) works before it ends. Default 5. */
  jobSeconds?: number;
  /** ANSI bold and dim. Default off, as when piped. */
  color?: boolean;
  /** A person at a terminal: a prompt, and what they type is not echoed again. Default off. */
  interactive?: boolean;
  /** The bot's own log lines, shown dimmed, from this level. Default warn. */
  logLevel?: LogLevel;
  /** Aborting quits now, as `quit` does. */
  signal?: AbortSignal;
}

export const DEFAULT_JOB_SECONDS = 5;
const WAIT_FOR_MS = 60_000;
// The bot's work for one request (a job to start, a digest to gather) is over long before this.
const SETTLE_MS = 30_000;

export async function runSandbox(options: SandboxOptions): Promise<void> {
  const jobSeconds = options.jobSeconds ?? DEFAULT_JOB_SECONDS;
  const terminal = new Terminal(options.output, styleFor(options.color ?? false));
  const { style } = terminal;
  const closing: Array<() => Promise<unknown>> = [];
  try {
    terminal.print(
      `${style.bold('docs-agent sandbox')}: the real bot, talking to a simulated Slack workspace and a simulated Mintlify on this machine.`,
    );
    terminal.print(
      style.dim(
        `You are @${SANDBOX_SLACK.userName} in #${SANDBOX_SLACK.channelName}. A job works for ${jobSeconds} s, then opens a pull request. Type help for what you can do.`,
      ),
    );
    const slack = await startSimulatedSlack();
    closing.push(() => slack.close());
    const mintlify = await startSimulatedMintlify({ jobSeconds });
    closing.push(() => mintlify.close());

    const view = new ChannelView(terminal, {
      users: { [SANDBOX_SLACK.user]: SANDBOX_SLACK.userName, [SANDBOX_SLACK.botUserId]: 'docs-agent' },
      channels: { [SANDBOX_SLACK.channel]: SANDBOX_SLACK.channelName },
      botUserId: SANDBOX_SLACK.botUserId,
    });
    const stopWatching = slack.fake.onCall((call) => view.show(call));
    closing.push(async () => stopWatching());

    const config = sandboxConfig(slack, mintlify, jobSeconds, options.logLevel ?? 'warn');
    const logger = createLogger({
      level: config.logLevel,
      secrets: secretsOf(config),
      sink: (line) => terminal.print(style.dim(`· ${logText(line)}`)),
    });
    const bot = await createDocsAgent(config, { logger });
    closing.push(() => bot.stop());
    const { port } = await bot.start();

    await converse({
      ...options,
      jobSeconds,
      terminal,
      view,
      slack,
      mintlify,
      bot,
      botUrl: `http://127.0.0.1:${port}`,
    });
  } finally {
    for (const close of closing.reverse()) await close().catch(() => {});
  }
}

/** The bot's configuration, as an operator would set it, pointed at the simulations. */
function sandboxConfig(
  slack: SimulatedSlack,
  mintlify: SimulatedMintlify,
  jobSeconds: number,
  logLevel: LogLevel,
): Config {
  // A few checks per job, never more than one a second, so an ending is seen soon without a flood.
  const pollMs = String(Math.round(Math.min(1_000, Math.max(100, (jobSeconds * 1000) / 4))));
  return loadConfig({
    SLACK_BOT_TOKEN: SANDBOX_SLACK.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    MINTLIFY_API_KEY: SANDBOX_MINTLIFY.apiKey,
    MINTLIFY_PROJECT_ID: SANDBOX_MINTLIFY.projectId,
    MINTLIFY_API_URL: mintlify.url,
    // No REDIS_URL: the in-memory store. No DIGEST_CHANNEL: the weekly digest would be posted at
    // once on every start (a missed week is caught up); `/docs-agent digest` shows the same message.
    STORE_NAMESPACE: 'sandbox',
    PORT: '0',
    POLL_INTERVAL_MS: pollMs,
    POLL_MAX_INTERVAL_MS: pollMs,
    LOG_LEVEL: logLevel,
  });
}

/** `2025-06-02T09:00:00.000Z WARN  docs-agent text` -> `warn: text`. */
function logText(line: string): string {
  const match = /^\S+ (\w+)\s+\S+ ([\s\S]*)$/.exec(line);
  return match ? `${match[1]?.toLowerCase()}: ${match[2]}` : line;
}

interface Session extends SandboxOptions {
  jobSeconds: number;
  terminal: Terminal;
  view: ChannelView;
  slack: SimulatedSlack;
  mintlify: SimulatedMintlify;
  bot: DocsAgent;
  botUrl: string;
}

/** Reads commands until `quit`, the end of the input (then lets running work finish) or the signal. */
async function converse(session: Session): Promise<void> {
  const { terminal, interactive = false } = session;
  const prompt = createInterface({
    input: session.input,
    ...(interactive ? { output: session.output, terminal: true, prompt: '› ' } : { terminal: false }),
    crlfDelay: Infinity,
  });
  if (interactive) terminal.attach(prompt);
  const quit = new AbortController();
  const quitNow = () => quit.abort();
  session.signal?.addEventListener('abort', quitNow, { once: true });
  prompt.on('SIGINT', quitNow); // Ctrl-C at the prompt
  quit.signal.addEventListener('abort', () => prompt.close(), { once: true });

  try {
    terminal.showPrompt();
    for await (const line of prompt) {
      terminal.promptTaken();
      if (quit.signal.aborted) break;
      if (!interactive) terminal.print(terminal.style.bold(`› ${line}`));
      const command = parseSandboxCommand(line);
      if (command.kind === 'quit') return;
      await perform(session, command, quit.signal);
      if (quit.signal.aborted) break;
      terminal.showPrompt();
    }
    if (!quit.signal.aborted) await finishRunningWork(session, quit.signal);
  } finally {
    session.signal?.removeEventListener('abort', quitNow);
    prompt.close();
  }
}

async function perform(session: Session, command: SandboxCommand, quit: AbortSignal): Promise<void> {
  const { terminal, view, slack, bot, botUrl } = session;
  const say = (text: string) => terminal.print(terminal.style.dim(text));
  switch (command.kind) {
    case 'slash': {
      const answer = await slack.slashCommand(botUrl, command.text);
      if (answer.status !== 200) say(`(the bot answered HTTP ${answer.status})`);
      view.showAnswer(answer.json);
      return settle(bot);
    }
    case 'reply': {
      const thread = await threadFor(session, command.message);
      if ('problem' in thread) return say(thread.problem);
      const message = slack.reply(thread.ts, command.text);
      view.showYourReply(SANDBOX_SLACK.userName, SANDBOX_SLACK.channel, thread.ts, message.ts, command.text);
      const answer = await slack.deliver(botUrl, message);
      if (answer.status !== 200) say(`(the bot answered HTTP ${answer.status})`);
      return settle(bot);
    }
    case 'wait':
      await sleep(command.seconds * 1000, undefined, { signal: quit }).catch(() => {});
      return;
    case 'waitFor': {
      const seen = await view.waitFor(command.text, WAIT_FOR_MS, quit);
      if (!seen && !quit.aborted)
        say(`(nothing with “${command.text}” in ${WAIT_FOR_MS / 1000} s; going on)`);
      return;
    }
    case 'help':
      return terminal.print(SANDBOX_HELP);
    case 'problem':
      return say(command.text);
    case 'quit':
    case 'nothing':
      return;
  }
}

/** The thread of message #n, or of the latest job (the bot's own records know which that is). */
async function threadFor(
  session: Session,
  n: number | undefined,
): Promise<{ ts: string } | { problem: string }> {
  if (n !== undefined) {
    const message = session.view.message(n);
    return message ? { ts: message.ts } : { problem: `There is no message #${n}.` };
  }
  const [latest] = await session.bot.context.jobs.records.recentInChannel(SANDBOX_SLACK.channel, 1);
  return latest?.threadTs
    ? { ts: latest.threadTs }
    : { problem: 'There is no job thread yet: start a job with /docs-agent <instruction>.' };
}

/** Lets the bot finish what the last request started (the card posted, the reply delivered). */
async function settle(bot: DocsAgent): Promise<void> {
  await bot.context.inFlight.drain(SETTLE_MS);
}

/** At the end of the input: running jobs end, and the bot tells their threads, before the sandbox stops. */
async function finishRunningWork(session: Session, quit: AbortSignal): Promise<void> {
  const { mintlify, bot, terminal } = session;
  const idle = () => mintlify.working === 0 && bot.follower.size === 0 && bot.context.inFlight.size === 0;
  if (idle()) return;
  terminal.print(terminal.style.dim('(end of input: letting the running jobs finish…)'));
  const deadline = Date.now() + (session.jobSeconds + 30) * 1000;
  while (!idle() && Date.now() < deadline && !quit.aborted) {
    await sleep(50, undefined, { signal: quit }).catch(() => {});
  }
  if (!idle()) terminal.print(terminal.style.dim('(stopping with work still running)'));
}
