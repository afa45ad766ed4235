import type { ChildProcess } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from '../support/botHarness.js';
import { botEnv, runBot } from '../support/botProcess.js';

const APP_TOKEN = 'xapp-1-test-app-level-token';
const children: ChildProcess[] = [];
const fakes: Array<SlackFake | MintlifyFake> = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** The bot, run in Socket Mode against fakes of its own, with its socket open. */
async function socketModeBot() {
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  fakes.push(slack, mintlify);
  const socket = slack.socketMode;
  if (!socket) throw new Error('the fake has no Socket Mode');
  const bot = runBot(
    botEnv(slack, mintlify, { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: undefined }),
  );
  children.push(bot.child);
  await bot.printed(/docs-agent worker is running/);
  await socket.connected();
  return { bot, slack, socket };
}

/**
 * The bot, run in Socket Mode with its socket open; then the socket drops, and Slack answers the bot's
 * asks for a new one (`apps.connections.open`) with each of `refusals` in turn (`times` times, or once).
 */
async function socketDroppedThen(...refusals: Array<{ error: string; times?: number }>) {
  const { bot, slack, socket } = await socketModeBot();
  for (const { error, times } of refusals) slack.failNext('apps.connections.open', { error }, times);
  await socket.dropConnections();
  return bot;
}

it(
  'in Socket Mode, an app-level token Slack refuses as the socket reopens (revoked, regenerated) is said in plain words, not as a crash',
  { timeout: 60_000 },
  async () => {
    // The connection drops (Slack refreshes it now and then), and the token no longer opens a new one.
    const bot = await socketDroppedThen({ error: 'invalid_auth' });
    await bot.printed(/Failed to retrieve a new WSS URL/);

    // As at start: the variable is named, with what to do (web.ts's appTokenRefused) ...
    await bot.printed(/Slack refused SLACK_APP_TOKEN \(invalid_auth\): copy the App-Level Token/);
    // ... rather than an unhandled rejection of the Socket Mode client taking the process down.
    expect(bot.output()).not.toContain('stopped by an unexpected error');
    // It stops as on SIGTERM, and exits 1: the operator must set a new token.
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('stopping: no new requests');
  },
);

it(
  'in Socket Mode, an app-level token Slack answers token_revoked as the socket reopens stops the bot in plain words, rather than leaving it deaf',
  { timeout: 90_000 },
  async () => {
    // The token was revoked in "Basic Information": from now on Slack refuses it, every time.
    const bot = await socketDroppedThen({ error: 'token_revoked', times: 1_000 });
    await bot.printed(/Failed to retrieve a new WSS URL/);

    // As for invalid_auth: the variable named, with what to do, and a stop for the process manager.
    await bot.printed(/Slack refused SLACK_APP_TOKEN \(token_revoked\)/, 30_000);
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('stopping: no new requests');
  },
);

it(
  'in Socket Mode, an app-level token refused on the try after a passing failure of Slack is said in plain words, not as a crash',
  { timeout: 90_000 },
  async () => {
    // The socket drops; Slack fails once on its side (its client tries again), then refuses the
    // token, which was regenerated meanwhile.
    const bot = await socketDroppedThen({ error: 'fatal_error' }, { error: 'invalid_auth', times: 100 });

    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('Slack refused SLACK_APP_TOKEN (invalid_auth): copy the App-Level Token');
    expect(bot.output()).not.toContain('stopped by an unexpected error');
    expect(bot.output()).toContain('stopping: no new requests');
  },
);

it(
  'in Socket Mode, told to stop while Slack no longer answers on the socket (a link gone half open), exits in time, as a stop should',
  { timeout: 60_000 },
  async () => {
    const { bot, socket } = await socketModeBot();
    socket.goQuiet();

    bot.child.kill('SIGTERM');
    // Slack's client waits 30 s for an answer to its close frame: the stop goes on without it, and the
    // process ends on its own rather than at the 9.5-s hard exit (exit 1).
    expect(await bot.exited).toBe(0);
  },
);
