import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from './fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './support/botHarness.js';
import { botEnv, runBot } from './support/botProcess.js';
import { heldStep } from './support/leases.js';
import { sendSlashCommand } from './support/slackRequests.js';

const children: ChildProcess[] = [];
const fakes: Array<SlackFake | MintlifyFake> = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function startFakes() {
  const slack = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  fakes.push(slack, mintlify);
  return { slack, mintlify };
}

describe('npm start', () => {
  it('with missing configuration says which variables are missing and does not start', async () => {
    const bot = runBot({ SLACK_BOT_TOKEN: SECRETS.botToken });
    children.push(bot.child);
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('MINTLIFY_API_KEY is missing');
    expect(bot.output()).toContain('SLACK_SIGNING_SECRET is missing');
    expect(bot.output()).toContain('README.md');
    expect(bot.output()).toContain(
      'To try the bot without Slack or a Mintlify account, run: npm run sandbox',
    );
    expect(bot.output()).not.toContain(SECRETS.botToken);
  });

  it('with a wrong SLACK_BOT_TOKEN says so in plain words and exits', async () => {
    const { slack, mintlify } = await startFakes();
    const wrong = 'xoxb-2222-revoked-bot-token';
    const bot = runBot(botEnv(slack, mintlify, { SLACK_BOT_TOKEN: wrong }));
    children.push(bot.child);
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('docs-agent cannot start: Slack refused SLACK_BOT_TOKEN (invalid_auth)');
    expect(bot.output()).toContain('Bot User OAuth Token');
    expect(bot.output()).not.toContain(wrong);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('listens while Slack checks its token, and a command that comes first waits for the answer', async () => {
    const { slack, mintlify } = await startFakes();
    const check = heldStep();
    slack.failNext('auth.test', { until: check.until });
    const bot = runBot(botEnv(slack, mintlify));
    children.push(bot.child);
    const url = await bot.listening();
    await vi.waitFor(() => expect(slack.callsTo('auth.test')).toHaveLength(1));

    const acked = sendSlashCommand(url, SECRETS.signingSecret, {
      text: 'Document X',
      response_url: slack.responseUrl(),
    });
    check.release();
    expect((await acked).status).toBe(200);
    await vi.waitFor(() => expect(slack.callsTo('chat.postMessage')).toHaveLength(1), { timeout: 15_000 });
  });

  it('answers the health check, and on SIGTERM finishes the job in flight and exits cleanly', async () => {
    const { slack, mintlify } = await startFakes();
    const bot = runBot(botEnv(slack, mintlify));
    children.push(bot.child);
    const url = await bot.listening();

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);

    mintlify.injectFault('createJob', { delayMs: 800 });
    const ack = await sendSlashCommand(url, SECRETS.signingSecret, {
      text: 'Document X',
      response_url: slack.responseUrl(),
    });
    expect(ack.status).toBe(200);
    bot.child.kill('SIGTERM');

    expect(await bot.exited).toBe(0);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(bot.output()).toContain('SIGTERM received');
    expect(bot.output()).not.toContain(SECRETS.botToken);
    expect(bot.output()).not.toContain(SECRETS.mintlifyKey);
  });
});
