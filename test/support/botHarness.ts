import type { Logger } from '@slack/bolt';
import { createDocsAgent, type DocsAgent, type DocsAgentOptions } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { dropNamespace, TEST_REDIS_URL, uniqueNamespace } from './redis.js';
import {
  type EventOptions,
  type SigningOptions,
  type SlackResponse,
  type SlashCommandFields,
  sendEvent,
  sendSlashCommand,
} from './slackRequests.js';

/** Known secret values, so tests can assert none of them ever leaks. */
export const SECRETS = {
  botToken: 'xoxb-test-0000-bot-token-value',
  signingSecret: 'test-signing-secret-value-0123456789',
  mintlifyKey: 'mint_test_admin_key_value_abcdef',
} as const;
export const PROJECT_ID = 'proj_test';

export interface BotHarness {
  bot: DocsAgent;
  config: Config;
  url: string;
  slack: SlackFake;
  mintlify: MintlifyFake;
  logs: string[];
  /** `/docs-agent <text>` as Slack sends it; the response URL points at the Slack fake. */
  command(
    text: string,
    fields?: Partial<SlashCommandFields>,
    signing?: SigningOptions,
  ): Promise<SlackResponse>;
  event(event: Record<string, unknown>, options?: EventOptions): Promise<SlackResponse>;
  /** Stops the bot only (the fakes and Redis stay), as a restart or a crash would. */
  stopBot(): Promise<void>;
  /** Stops everything this harness started. */
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string | undefined>;
  /** Share fakes and the Redis namespace with another harness (a second instance, or a restart). */
  slack?: SlackFake;
  mintlify?: MintlifyFake;
  namespace?: string;
  /** Use the in-memory store instead of Redis. */
  memory?: boolean;
  mintlifyOptions?: DocsAgentOptions['mintlify'];
  /**
   * Slack's answers to a malformed message that this test provokes on purpose (an oversized digest):
   * any other the fake gives fails the test at close, even where the bot falls back.
   */
  malformedExpected?: string[];
  /** How often what waits for Redis after a start or a follow-up is tried again (the bot's default: 2 s). */
  recordAgainEveryMs?: number;
  /** How long Socket Mode holds an event the queue could not take (the bot's default: 10 minutes). */
  holdEventForMs?: number;
  /** What running work gets to finish when the bot is stopped (the bot's default: 7 s). */
  stopGraceMs?: number;
  /** How far apart a person's Home tab refreshes are at least (the bot's default: 3 s). */
  homeRefreshMinIntervalMs?: number;
  /** How often a digest job is tried (the bot's default: 4 times, a minute apart and more, then an hour later). */
  digestTries?: DocsAgentOptions['digestTries'];
  /** How the digest's read waits out Mintlify's analytics limit (the bot's default: real time). */
  digest?: DocsAgentOptions['digest'];
  /** How long a job may read as it ended before, after a follow-up (the bot's default: 2 minutes). */
  followUpGraceMs?: number;
  /** How often the worker makes sure the queues hold what they should (the bot's default: 10 minutes). */
  reconcileEveryMs?: number;
  /** How long the queues' workers get to connect before the log says so (the bot's default: 15 s). */
  workersReadyWithinMs?: number;
  /** How often a process with the web role alone looks for a worker (the bot's default: a minute). */
  workerWatchMs?: number;
  /** Default: deployments read every 50 ms, and asked for one every 100 ms (the bot: one every 12 s). */
  previews?: DocsAgentOptions['previews'];
  /** How long a note of a fix holds its digest between renewals (the bot's default: 6 s). */
  fixNoteHoldMs?: number;
  /** How long Redis may answer as a read-only replica before the bot stops (the bot's default: a minute). */
  readOnlyLimitMs?: number;
  /** Told when the bot cannot go on (as main.ts is, which then stops it). */
  onFailure?: DocsAgentOptions['onFailure'];
  /** The bot's clock (default: the real one). */
  now?: () => Date;
}

/** Starts the real bot over HTTP on a free port, against loopback fakes of Slack and Mintlify. */
export async function startBot(options: HarnessOptions = {}): Promise<BotHarness> {
  const slack = options.slack ?? (await startSlackFake({ botToken: SECRETS.botToken }));
  const mintlify =
    options.mintlify ?? (await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID }));
  // A bot that does not start leaves nothing running: the fakes made here are closed.
  const closeOwnFakes = async () => {
    if (!options.slack) await slack.close();
    if (!options.mintlify) await mintlify.close();
  };
  try {
    return await startedBot(options, slack, mintlify, closeOwnFakes);
  } catch (error) {
    // The start's own error is the one to see; a fake's complaint at close would hide it.
    await closeOwnFakes().catch(() => {});
    throw error;
  }
}

/** The bot, started on running fakes; its harness's close stops it and closes the fakes `startBot` made. */
async function startedBot(
  options: HarnessOptions,
  slack: SlackFake,
  mintlify: MintlifyFake,
  closeOwnFakes: () => Promise<void>,
): Promise<BotHarness> {
  const config = loadConfig({
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    MINTLIFY_API_KEY: SECRETS.mintlifyKey,
    MINTLIFY_PROJECT_ID: PROJECT_ID,
    MINTLIFY_API_URL: mintlify.url,
    REDIS_URL: options.memory ? undefined : TEST_REDIS_URL,
    STORE_NAMESPACE: options.namespace ?? uniqueNamespace('bot'),
    PORT: '0',
    LOG_LEVEL: 'debug',
    // Previews add card edits and thread replies; the tests of previews turn them on.
    PREVIEWS: 'off',
    ...options.env,
  });
  const logs: string[] = [];
  const logger: Logger = createLogger({ level: 'debug', secrets: [], sink: (line) => logs.push(line) });
  const bot = await createDocsAgent(config, {
    logger,
    slackRetries: { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 20 },
    mintlify: { retry: { baseDelayMs: 5, maxDelayMs: 20, maxElapsedMs: 500 }, ...options.mintlifyOptions },
    previews: {
      statusEveryMs: 50,
      unansweredWaitMs: 100,
      limiter: { max: 1, durationMs: 100 },
      ...options.previews,
    },
    ...(options.recordAgainEveryMs ? { recordAgainEveryMs: options.recordAgainEveryMs } : {}),
    ...(options.holdEventForMs ? { holdEventForMs: options.holdEventForMs } : {}),
    ...(options.stopGraceMs === undefined ? {} : { stopGraceMs: options.stopGraceMs }),
    ...(options.homeRefreshMinIntervalMs === undefined
      ? {}
      : { homeRefreshMinIntervalMs: options.homeRefreshMinIntervalMs }),
    ...(options.digestTries ? { digestTries: options.digestTries } : {}),
    ...(options.digest ? { digest: options.digest } : {}),
    ...(options.reconcileEveryMs ? { reconcileEveryMs: options.reconcileEveryMs } : {}),
    ...(options.followUpGraceMs === undefined ? {} : { followUpGraceMs: options.followUpGraceMs }),
    ...(options.workersReadyWithinMs ? { workersReadyWithinMs: options.workersReadyWithinMs } : {}),
    ...(options.workerWatchMs ? { workerWatchMs: options.workerWatchMs } : {}),
    ...(options.fixNoteHoldMs ? { fixNoteHoldMs: options.fixNoteHoldMs } : {}),
    ...(options.readOnlyLimitMs ? { readOnlyLimitMs: options.readOnlyLimitMs } : {}),
    ...(options.onFailure ? { onFailure: options.onFailure } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const { port } = await bot.start();
  const url = `http://127.0.0.1:${port}`;

  const unseenBefore = slack.unseenEphemerals().length;
  const startedAt = Date.now();
  let botStopped = false;
  const stopBot = async () => {
    if (botStopped) return;
    botStopped = true;
    await bot.stop();
  };
  return {
    bot,
    config,
    url,
    slack,
    mintlify,
    logs,
    command: (text, fields = {}, signing = {}) =>
      sendSlashCommand(
        url,
        SECRETS.signingSecret,
        { text, response_url: slack.responseUrl(), ...fields },
        signing,
      ),
    event: (event, eventOptions) => {
      inHistory(slack, event);
      return sendEvent(url, SECRETS.signingSecret, event, eventOptions);
    },
    stopBot,
    close: async () => {
      await stopBot();
      // An answer Slack would show to nobody fails the test that made it.
      const unseen = slack.unseenEphemerals().slice(unseenBefore);
      // A message Slack would refuse as malformed is the bot's own bug, even where it falls back.
      const malformed = slack.calls
        .filter((call) => call.at >= startedAt && !call.injected)
        .filter((call) => MALFORMED.has(String(call.response.error)))
        .filter((call) => !options.malformedExpected?.includes(String(call.response.error)))
        .map((call) => `${call.method}: ${String(call.response.error)}`);
      await closeOwnFakes();
      // A namespace of its own, on the shared Redis: nothing of it is left behind.
      if (!options.namespace && config.store.redisUrl === TEST_REDIS_URL) {
        await dropNamespace(`${config.store.namespace}:`);
      }
      if (unseen.length > 0) throw new Error(`Slack would show these to nobody:\n${unseen.join('\n')}`);
      if (malformed.length > 0) throw new Error(`Slack refused these as malformed:\n${malformed.join('\n')}`);
    },
  };
}

/** Slack's answers to a message it will not take as written: the bot's own bug, never a passing trouble. */
const MALFORMED = new Set([
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_arguments',
  'invalid_attachments',
  'msg_blocks_too_long',
  'msg_too_long',
  'no_text',
  'too_many_attachments',
  'invalid_metadata_format',
  'invalid_metadata_schema',
]);

/**
 * Slack sends a message event for a message it holds: a person's message (or mention) the test
 * sends is put in the channel's history first, unless it is there already, so reading it back or
 * reacting to it works as it would in Slack.
 */
function inHistory(slack: SlackFake, event: Record<string, unknown>): void {
  const { type, subtype, channel, ts, user, text, thread_ts, bot_id } = event;
  if (type !== 'message' && type !== 'app_mention') return;
  if (subtype !== undefined && subtype !== 'thread_broadcast' && subtype !== 'file_share') return;
  if (typeof channel !== 'string' || typeof ts !== 'string' || typeof user !== 'string') return;
  if (bot_id !== undefined || slack.message(channel, ts)) return;
  slack.seedMessage(channel, {
    ts,
    user,
    text: typeof text === 'string' ? text : '',
    ...(typeof thread_ts === 'string' ? { thread_ts } : {}),
  });
}
