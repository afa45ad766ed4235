import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from './fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './support/botHarness.js';
import { sendSlashCommand } from './support/slackRequests.js';

/** The bot as an operator runs it: its own process, configured by the environment. */
function runBot(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, exited, output: () => output };
}

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
    const bot = runBot({
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      MINTLIFY_API_KEY: SECRETS.mintlifyKey,
      MINTLIFY_PROJECT_ID: PROJECT_ID,
      MINTLIFY_API_URL: mintlify.url,
      PORT: '0',
    });
    children.push(bot.child);
    await expect.poll(() => bot.output(), { timeout: 15_000 }).toMatch(/listening on port \d+/);
    const port = /listening on port (\d+)/.exec(bot.output())?.[1];
    const url = `http://127.0.0.1:${port}`;

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
