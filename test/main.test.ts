import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from './fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './support/botHarness.js';
import { botEnv, runBot } from './support/botProcess.js';
import { sendSlashCommand } from './support/slackRequests.js';

const children: ChildProcess[] = [];
const fakes: Array<SlackFake | MintlifyFake> = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

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

  it('answers the health check, and on SIGTERM finishes the job in flight and exits cleanly', async () => {
    const slack = await startSlackFake({ botToken: SECRETS.botToken });
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    fakes.push(slack, mintlify);
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
