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

it(
  'in Socket Mode, an app-level token Slack refuses as the socket reopens (revoked, regenerated) is said in plain words, not as a crash',
  { timeout: 60_000 },
  async () => {
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

    // The connection drops (Slack refreshes it now and then), and the token no longer opens a new one.
    slack.failNext('apps.connections.open', { error: 'invalid_auth' });
    await socket.dropConnections();
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

    // The token was revoked in "Basic Information": from now on Slack refuses it, every time.
    slack.failNext('apps.connections.open', { error: 'token_revoked' }, 1_000);
    await socket.dropConnections();
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

    // The socket drops; Slack fails once on its side (its client tries again), then refuses the
    // token, which was regenerated meanwhile.
    slack.failNext('apps.connections.open', { error: 'fatal_error' });
    slack.failNext('apps.connections.open', { error: 'invalid_auth' }, 100);
    await socket.dropConnections();

    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('Slack refused SLACK_APP_TOKEN (invalid_auth): copy the App-Level Token');
    expect(bot.output()).not.toContain('stopped by an unexpected error');
    expect(bot.output()).toContain('stopping: no new requests');
  },
);
