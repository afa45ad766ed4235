import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, vi } from 'vitest';
import { SECRETS } from './support/botHarness.js';
import { botEnv, runBot, testProcesses } from './support/botProcess.js';
import { heldStep } from './support/leases.js';
import { TEST_REDIS_URL, uniqueNamespace } from './support/redis.js';
import { sendSlashCommand } from './support/slackRequests.js';

/** A loopback port nothing listens on (found free, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Each test has fakes and bot processes of its own (testProcesses): they run at once, most of each
// being the bots' start.
describe.concurrent('npm start', () => {
  it('with missing configuration says which variables are missing and does not start', async (t) => {
    const { expect } = t;
    const { keep } = testProcesses(t);
    const bot = runBot({ SLACK_BOT_TOKEN: SECRETS.botToken });
    keep(bot);
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('MINTLIFY_API_KEY is missing');
    expect(bot.output()).toContain('SLACK_SIGNING_SECRET is missing');
    expect(bot.output()).toContain('README.md');
    expect(bot.output()).toContain(
      'To try the bot without Slack or a Mintlify account, run: npm run sandbox',
    );
    expect(bot.output()).not.toContain(SECRETS.botToken);
  });

  it('reading a .env file, refuses a value that .env cuts at a # (DIGEST_CRON=0 9 * * 5#L would run every Friday), and takes a # comment or a quoted #', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-env-'));
    const envFile = join(dir, '.env');
    // As README.md has the last Friday of the month written; .env reads a # as the start of a comment.
    writeFileSync(
      envFile,
      'DIGEST_CHANNEL=C0DIGEST\nDIGEST_CRON=0 9 * * 5#L\nLOG_LEVEL=info # the default\n',
    );
    try {
      const cut = runBot({ ...botEnv(slack, mintlify), ENV_FILE: envFile });
      keep(cut);
      // A bot that starts listens: the test fails then, rather than wait out its time limit.
      expect(await Promise.race([cut.exited, cut.listening().then(() => 'listening')])).toBe(1);
      expect(cut.output()).toContain('docs-agent cannot start: 1 configuration problem');
      expect(cut.output()).toContain(
        `DIGEST_CRON in ${envFile} has a # right after other characters, where .env files start a comment, so the rest of the value would be dropped: wrap the value in double quotes (DIGEST_CRON="…")`,
      );
      expect(cut.output()).not.toContain('listening on port');

      // Quoted, the # is the value's; after a space, a comment; set in the environment, the file's line is not read.
      writeFileSync(
        envFile,
        'DIGEST_CHANNEL=C0DIGEST\nDIGEST_CRON="0 9 * * 5#L"\nLOG_LEVEL=info # the default\n',
      );
      const quoted = runBot({ ...botEnv(slack, mintlify), ENV_FILE: envFile });
      keep(quoted);
      await quoted.printed(/weekly digest scheduled "0 9 \* \* 5#L"/);
      writeFileSync(envFile, 'DIGEST_CRON=0 9 * * 5#L\n');
      const overridden = runBot({ ...botEnv(slack, mintlify), ENV_FILE: envFile, DIGEST_CRON: '0 9 * * 1' });
      keep(overridden);
      await overridden.listening();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reading a .env file, refuses a value .env reads as empty, cut at the # it starts with (DIGEST_CHANNEL=#docs), and takes a # comment after =', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-env-'));
    const envFile = join(dir, '.env');
    // The channel written by its name: .env reads it as empty, and the digest would have no channel.
    writeFileSync(envFile, 'DIGEST_CHANNEL=#docs\nLOG_LEVEL=# the default\n');
    try {
      const cut = runBot({ ...botEnv(slack, mintlify), ENV_FILE: envFile });
      keep(cut);
      expect(await Promise.race([cut.exited, cut.listening().then(() => 'listening')])).toBe(1);
      expect(cut.output()).toContain('docs-agent cannot start: 1 configuration problem');
      expect(cut.output()).toContain(`DIGEST_CHANNEL in ${envFile} starts with a #`);
      expect(cut.output()).not.toContain('LOG_LEVEL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with a .env that is a directory, says so in plain words (no stack trace) and does not start', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-env-'));
    // The default .env in the working directory, made a directory (a volume mounted at .env, a mkdir by mistake).
    mkdirSync(join(dir, '.env'));
    try {
      const env = botEnv(slack, mintlify);
      delete env.ENV_FILE;
      const bot = runBot({ ...env, ENV_FILE: '' }, { cwd: dir });
      keep(bot);
      expect(await Promise.race([bot.exited, bot.listening().then(() => 'listening')])).toBe(1);
      expect(bot.output()).toContain(
        'docs-agent cannot start: .env is not a file (a directory?): make it the file of variables, remove it, or set ENV_FILE=none to read no file',
      );
      expect(bot.output()).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('as a worker only (SERVICES=worker), starts without a signing secret: it takes no request from Slack', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const worker = runBot(
      botEnv(slack, mintlify, {
        SLACK_SIGNING_SECRET: undefined,
        SERVICES: 'worker',
        REDIS_URL: TEST_REDIS_URL,
        STORE_NAMESPACE: uniqueNamespace('worker-only'),
      }),
    );
    keep(worker);
    await worker.printed(/docs-agent worker is running \(SERVICES=worker/);
    expect(worker.output()).not.toContain('SLACK_SIGNING_SECRET');
    expect(worker.output()).not.toContain('listening on port');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('with a wrong SLACK_BOT_TOKEN says so in plain words and exits', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const wrong = 'xoxb-2222-revoked-bot-token';
    const bot = runBot(botEnv(slack, mintlify, { SLACK_BOT_TOKEN: wrong }));
    keep(bot);
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('docs-agent cannot start: Slack refused SLACK_BOT_TOKEN (invalid_auth)');
    // Said once: not also as a token that worked and was then revoked ("restart the bot").
    expect(bot.output()).not.toContain('Slack refuses SLACK_BOT_TOKEN');
    expect(bot.output()).toContain('Bot User OAuth Token');
    expect(bot.output()).not.toContain(wrong);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('names an uninstalled app, a Slack it cannot reach, and a port in use', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    // Started first, and awaited last: it exits only once its retries of Slack are spent (seconds),
    // and asks nothing of the Slack fake the two others share.
    const closed = await closedPort();
    const unreachable = runBot(botEnv(slack, mintlify, { SLACK_API_URL: `http://127.0.0.1:${closed}/api/` }));
    keep(unreachable);

    slack.failNext('auth.test', { error: 'account_inactive' }, 1);
    const inactive = runBot(botEnv(slack, mintlify));
    keep(inactive);
    expect(await inactive.exited).toBe(1);
    expect(inactive.output()).toContain(
      'Slack refused SLACK_BOT_TOKEN (account_inactive): the app was uninstalled',
    );

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const inUse = runBot(botEnv(slack, mintlify, { PORT: String(port) }));
      keep(inUse);
      expect(await inUse.exited).toBe(1);
      expect(inUse.output()).toContain(
        `docs-agent cannot start: port ${port} is already in use by another process`,
      );
    } finally {
      taken.close();
    }

    expect(await unreachable.exited).toBe(1);
    expect(unreachable.output()).toContain(
      `could not reach Slack at http://127.0.0.1:${closed}/api/ to check SLACK_BOT_TOKEN (ECONNREFUSED)`,
    );
  });

  it('answers the health check, and on SIGTERM finishes the job in flight and exits cleanly', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const bot = runBot(botEnv(slack, mintlify));
    keep(bot);
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

  it('stops once when told twice (SIGTERM, then Ctrl-C while it stops): the job in flight finishes, and it exits cleanly', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const bot = runBot(botEnv(slack, mintlify));
    keep(bot);
    const url = await bot.listening();

    mintlify.injectFault('createJob', { delayMs: 800 });
    const ack = await sendSlashCommand(url, SECRETS.signingSecret, {
      text: 'Document X',
      response_url: slack.responseUrl(),
    });
    expect(ack.status).toBe(200);
    bot.child.kill('SIGTERM');
    await bot.printed(/SIGTERM received/);
    bot.child.kill('SIGINT');

    expect(await bot.exited).toBe(0);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(bot.output()).not.toContain('SIGINT received');
  });

  // On its own, after the others: its steps are bound to the bot's 1.5-s wait for Slack, which other bots starting at once would crowd.
  it.sequential(
    'listens while Slack checks its token: a command waits for the answer a moment, then is refused, never queued',
    async (t) => {
      const { expect } = t;
      const { startFakes, keep } = testProcesses(t);
      const { slack, mintlify } = await startFakes();
      const check = heldStep();
      slack.failNext('auth.test', { until: check.until });
      const bot = runBot(botEnv(slack, mintlify));
      keep(bot);
      const url = await bot.listening();
      await vi.waitFor(() => expect(slack.callsTo('auth.test')).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      const command = (text: string) =>
        sendSlashCommand(url, SECRETS.signingSecret, { text, response_url: slack.responseUrl() });

      // Slack has not answered within 1.5 s: the command is refused (Slack shows the person an error)
      // rather than queued after Slack stopped waiting for its acknowledgement.
      const refused = await command('Document X');
      expect(refused.status).not.toBe(200);
      expect(bot.output()).toContain('Slack did not confirm SLACK_BOT_TOKEN within 1500 ms');

      // One that comes while Slack is still answering waits for it, and is taken.
      let answered = false;
      const waiting = command('Document Y').finally(() => (answered = true));
      // Short: the bot waits at most 1.5 s from the command's arrival, and the release must reach it within.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(answered).toBe(false);
      check.release();
      expect((await waiting).status).toBe(200);
      await vi.waitFor(() => expect(slack.callsTo('chat.postMessage')).toHaveLength(1), { timeout: 15_000 });
      expect(mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
        expect.objectContaining({ prompt: 'Document Y' }),
      ]);
    },
  );
});
