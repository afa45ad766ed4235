import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDocsAgent, type DocsAgent } from '../src/app.js';
import { type Config, loadConfig, type LogLevel, secretsOf } from '../src/config.js';
import { FIX_WITH_AGENT_ACTION } from '../src/digest/strugglesMessage.js';
import { SEND_TO_AGENT_SHORTCUT } from '../src/jobs/shortcutModal.js';
import { createLogger } from '../src/log.js';
import type { SlackCall, StoredMessage } from '../test/fakes/slackFake.js';
import type { SlackResponse } from '../test/support/slackRequests.js';
import { ChannelView } from './channelView.js';
import { parseSandboxCommand, SANDBOX_HELP, type SandboxCommand } from './sandboxCommands.js';
import { SANDBOX_MINTLIFY, type SimulatedMintlify, startSimulatedMintlify } from './simulatedMintlify.js';
import {
  type OpenedView,
  SANDBOX_SLACK,
  type SimulatedSlack,
  startSimulatedSlack,
  type ViewValues,
} from './simulatedSlack.js';
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
  /** Preview deployments of a job's pull request (PREVIEWS). Default on. */
  previews?: boolean;
  /** Aborting quits now, as `quit` does. */
  signal?: AbortSignal;
}

export const DEFAULT_JOB_SECONDS = 5;
const WAIT_FOR_MS = 60_000;
// The bot's work for one request (a job to start, a digest to gather) is over long before this.
const SETTLE_MS = 30_000;
// Slack gives an app 3 s to open a form or answer; the bot publishes the Home tab as soon.
const SLACK_ANSWER_MS = 10_000;

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
      users: {
        [SANDBOX_SLACK.user]: SANDBOX_SLACK.userName,
        [SANDBOX_SLACK.botUserId]: SANDBOX_SLACK.botName,
      },
      channels: { [SANDBOX_SLACK.channel]: SANDBOX_SLACK.channelName },
      dms: { [slack.dm]: SANDBOX_SLACK.user },
      botUserId: SANDBOX_SLACK.botUserId,
    });
    const stopWatching = slack.fake.onCall((call) => view.show(call));
    closing.push(async () => stopWatching());

    const config = sandboxConfig(
      slack,
      mintlify,
      jobSeconds,
      options.logLevel ?? 'warn',
      options.previews ?? true,
    );
    const logger = createLogger({
      level: config.logLevel,
      secrets: secretsOf(config),
      sink: (line) => terminal.print(style.dim(`· ${logText(line)}`)),
    });
    // The simulated deployment is ready in 3 s: checked each second, its preview shows soon after,
    // not at the bot's 5-second cadence meant for Mintlify's rate limit.
    // The simulated Mintlify has no preview limit: previews of jobs that end together need not wait
    // Mintlify's 12 s apiece, nor outlast what the end of the input waits for.
    const previews = { statusEveryMs: 1_000, limiter: { max: 1, durationMs: 500 } };
    const bot = await createDocsAgent(config, { logger, previews });
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
  previews: boolean,
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
    PREVIEWS: previews ? 'on' : 'off',
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
      session.view.commandBegins();
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
      checkAnswers(session, [answer]);
      view.showAnswer(answer.json);
      return settle(bot);
    }
    case 'say':
      return postYourMessage(session, SANDBOX_SLACK.channel, command.text);
    case 'dm':
      return postYourMessage(session, slack.dm, command.text);
    case 'reply': {
      const thread = await threadFor(session, command.message);
      if ('problem' in thread) return say(thread.problem);
      const message = slack.post(thread.channel, command.text, thread.ts);
      view.showYourReply(SANDBOX_SLACK.userName, thread.channel, thread.ts, message.ts, command.text);
      return deliver(session, thread.channel, message);
    }
    case 'shortcut':
      return useShortcut(session, command, quit);
    case 'fix':
      return fixFromDigest(session, command, quit);
    case 'home':
      return openHome(session, quit);
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

/** You post a message at the top level of #docs or your DM; Slack delivers it to the bot. */
async function postYourMessage(session: Session, channel: string, text: string): Promise<void> {
  const message = session.slack.post(channel, text);
  session.view.showYourMessage(SANDBOX_SLACK.userName, channel, message.ts, text);
  return deliver(session, channel, message);
}

async function deliver(session: Session, channel: string, message: StoredMessage): Promise<void> {
  checkAnswers(session, await session.slack.deliver(session.botUrl, channel, message));
  return settle(session.bot);
}

/** The bot acknowledges every request Slack sends it with HTTP 200; anything else is worth seeing. */
function checkAnswers(session: Session, answers: SlackResponse[]): void {
  const { terminal } = session;
  for (const answer of answers) {
    if (answer.status !== 200) terminal.print(terminal.style.dim(`(the bot answered HTTP ${answer.status})`));
  }
}

/**
 * “Send to docs agent” on message #n: Slack sends the shortcut, the bot opens its form, and you
 * fill it in and submit it, which Slack sends as the view you were shown with what you entered.
 */
async function useShortcut(
  session: Session,
  command: Extract<SandboxCommand, { kind: 'shortcut' }>,
  quit: AbortSignal,
): Promise<void> {
  const { slack, view, terminal, botUrl } = session;
  const say = (text: string) => terminal.print(terminal.style.dim(text));
  const chosen = view.message(command.message);
  const message = chosen && slack.fake.message(chosen.channel, chosen.ts);
  if (!chosen || !message) return say(`There is no message #${command.message}.`);

  const form = await openedForm(
    session,
    slack.messageShortcut(botUrl, SEND_TO_AGENT_SHORTCUT, chosen.channel, message),
    quit,
  );
  if (!form) return;

  const filled = fillForm(form, command.instruction, command.includeThread);
  if (command.includeThread && !filled.ticked) {
    say(`(message #${command.message} is in no thread, so the form has no box to include one)`);
  }
  const ticked = filled.ticked ? `, tick “${filled.ticked}”` : '';
  const answer = await slack.submitView(botUrl, form, filled.values);
  checkAnswers(session, [answer]);
  view.showSubmission(
    `you write “${command.instruction}”${ticked} and choose ${submitLabel(form)}`,
    answer.json,
  );
  return settle(session.bot);
}

/**
 * The form the bot opens for a click (a shortcut, a button) with its trigger_id, shown; or
 * undefined when it answered at the click's response URL instead (shown as "only you") or opened
 * none. Watched from before the click leaves: nothing has been awaited yet.
 */
async function openedForm(
  session: Session,
  click: { triggerId: string; responseId: string; sent: Promise<SlackResponse> },
  quit: AbortSignal,
): Promise<OpenedView | undefined> {
  const opened = nextCall(
    session.slack.fake,
    (call) =>
      (call.method === 'views.open' && call.args.trigger_id === click.triggerId) ||
      (call.method === 'response_url' && call.responseId === click.responseId),
    quit,
  );
  checkAnswers(session, [await click.sent]);
  const call = await opened;
  if (!call) {
    if (!quit.aborted) session.terminal.print(session.terminal.style.dim('(the bot opened no form)'));
    return undefined;
  }
  if (call.method !== 'views.open') {
    await settle(session.bot);
    return undefined;
  }
  session.view.showForm(call);
  const form = call.response.view;
  return call.response.ok === true && isOpenedView(form) ? form : undefined;
}

const submitLabel = (form: OpenedView) => (isObject(form.submit) ? String(form.submit.text) : 'Submit');

/** "Fix with the docs agent" on an item of a digest: the bot's form, submitted as it was filled in. */
async function fixFromDigest(
  session: Session,
  command: Extract<SandboxCommand, { kind: 'fix' }>,
  quit: AbortSignal,
): Promise<void> {
  const { slack, view, botUrl } = session;
  const say = (text: string) => session.terminal.print(session.terminal.style.dim(text));
  const chosen = view.message(command.message);
  const message = chosen && slack.fake.message(chosen.channel, chosen.ts);
  if (!chosen || !message) return say(`There is no message #${command.message}.`);
  type FixButton = { action_id: string; value?: string; text: { text: string } };
  const buttons = ((message.blocks ?? []) as Array<{ accessory?: unknown; block_id?: string }>)
    .filter(
      (block): block is { accessory: FixButton; block_id?: string } =>
        isObject(block.accessory) && block.accessory.action_id === FIX_WITH_AGENT_ACTION,
    )
    .map((block) => ({ ...block.accessory, blockId: block.block_id }));
  const button = buttons[command.item - 1];
  if (!button)
    return say(`Message #${command.message} has no item ${command.item} to fix (it has ${buttons.length}).`);

  const form = await openedForm(
    session,
    slack.clickButton(botUrl, chosen.channel, message, {
      action_id: button.action_id,
      text: button.text.text,
      ...(button.value === undefined ? {} : { value: button.value }),
      ...(button.blockId === undefined ? {} : { blockId: button.blockId }),
    }),
    quit,
  );
  if (!form) return;
  const filled = fillForm(form, initialInstruction(form), false);
  const answer = await slack.submitView(botUrl, form, filled.values);
  checkAnswers(session, [answer]);
  view.showSubmission(`you keep the instruction as filled in and choose ${submitLabel(form)}`, answer.json);
  return settle(session.bot);
}

/** The instruction the bot filled the form in with. */
function initialInstruction(form: OpenedView): string {
  const blocks = Array.isArray(form.blocks) ? (form.blocks as Array<Record<string, unknown>>) : [];
  const input = blocks.find((block) => block.block_id === 'instruction');
  const element = isObject(input?.element) ? input.element : undefined;
  return typeof element?.initial_value === 'string' ? element.initial_value : '';
}

/** What Slack reports for the form's inputs: the instruction typed in its text box, and the box ticked. */
function fillForm(
  form: OpenedView,
  instruction: string,
  includeThread: boolean,
): { values: ViewValues; ticked: string | undefined } {
  const values: ViewValues = {};
  let ticked: string | undefined;
  const blocks = Array.isArray(form.blocks) ? form.blocks : [];
  for (const block of blocks) {
    if (!isObject(block) || block.type !== 'input' || !isObject(block.element)) continue;
    const { element } = block;
    const [blockId, actionId] = [String(block.block_id), String(element.action_id)];
    if (element.type === 'plain_text_input') {
      values[blockId] = { [actionId]: { type: 'plain_text_input', value: instruction } };
    } else if (element.type === 'checkboxes') {
      const options = includeThread && Array.isArray(element.options) ? element.options.filter(isObject) : [];
      const labels = options.map((option) => (isObject(option.text) ? String(option.text.text) : ''));
      if (options.length > 0) ticked = labels.join('”, “');
      values[blockId] = { [actionId]: { type: 'checkboxes', selected_options: options } };
    }
  }
  return { values, ticked };
}

/** You open the bot's Home tab; the bot publishes it for you, and it is drawn as you would see it. */
async function openHome(session: Session, quit: AbortSignal): Promise<void> {
  const { slack, view, terminal, botUrl } = session;
  const openedAt = Date.now();
  const published = nextCall(
    slack.fake,
    (call) =>
      call.method === 'views.publish' && call.args.user_id === SANDBOX_SLACK.user && call.at >= openedAt,
    quit,
  );
  checkAnswers(session, [await slack.openHome(botUrl)]);
  const call = await published;
  if (call) view.showHome(SANDBOX_SLACK.userName, call);
  else if (!quit.aborted) terminal.print(terminal.style.dim('(the bot published no Home tab)'));
}

/** The first call the bot makes from now on that `matches`; undefined after a while, or on quitting. */
function nextCall(
  fake: SimulatedSlack['fake'],
  matches: (call: SlackCall) => boolean,
  quit: AbortSignal,
): Promise<SlackCall | undefined> {
  return new Promise((resolve) => {
    const done = (call: SlackCall | undefined) => {
      clearTimeout(timer);
      stopListening();
      quit.removeEventListener('abort', giveUp);
      resolve(call);
    };
    const giveUp = () => done(undefined);
    const timer = setTimeout(giveUp, SLACK_ANSWER_MS);
    const stopListening = fake.onCall((call) => {
      if (matches(call)) done(call);
    });
    quit.addEventListener('abort', giveUp, { once: true });
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOpenedView(value: unknown): value is OpenedView {
  return isObject(value) && typeof value.id === 'string';
}

/** The thread of message #n, or of your latest job (the bot's own records know which that is). */
async function threadFor(
  session: Session,
  n: number | undefined,
): Promise<{ channel: string; ts: string } | { problem: string }> {
  if (n !== undefined) {
    const message = session.view.message(n);
    return message ? { channel: message.channel, ts: message.ts } : { problem: `There is no message #${n}.` };
  }
  const [latest] = await session.bot.context.jobs.records.recentForUser(SANDBOX_SLACK.user, 1);
  return latest?.threadTs
    ? { channel: latest.channel, ts: latest.threadTs }
    : { problem: 'There is no job thread yet: start a job with /docs-agent <instruction>.' };
}

/** Lets the bot finish what the last request started (the card posted, the reply delivered). */
async function settle(bot: DocsAgent): Promise<void> {
  await bot.drained(SETTLE_MS).catch(() => {}); // the sandbox goes on; the work shows up when it is done
}

/** At the end of the input: running jobs end, and the bot tells their threads, before the sandbox stops. */
async function finishRunningWork(session: Session, quit: AbortSignal): Promise<void> {
  const { mintlify, bot, terminal } = session;
  const idle = async () =>
    mintlify.working === 0 &&
    (await bot.following()) === 0 &&
    (await bot.drained(0).then(
      () => true,
      () => false,
    ));
  if (await idle()) return;
  terminal.print(terminal.style.dim('(end of input: letting the running jobs finish…)'));
  const deadline = Date.now() + (session.jobSeconds + 30) * 1000;
  while (!(await idle()) && Date.now() < deadline && !quit.aborted) {
    await sleep(50, undefined, { signal: quit }).catch(() => {});
  }
  if (!(await idle())) terminal.print(terminal.style.dim('(stopping with work still running)'));
}
