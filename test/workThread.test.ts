import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadedDocsAgent, type RunningDocsAgent } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { type MintlifyFake, startMintlifyFake } from './fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './support/botHarness.js';
import { botEnv } from './support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from './support/redis.js';
import { sendEvent, sendSlashCommand } from './support/slackRequests.js';

let slack: SlackFake;
let mintlify: MintlifyFake;
let bot: RunningDocsAgent | undefined;
afterEach(async () => {
  await bot?.stop();
  await Promise.all([slack?.close(), mintlify?.close()]);
});

/** The bot as main.ts runs it: the front door on this thread, the work on its worker thread. */
async function startThreaded(busyBacklog?: number) {
  slack = await startSlackFake({ botToken: SECRETS.botToken });
  mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  const config = loadConfig(
    botEnv(slack, mintlify, {
      REDIS_URL: TEST_REDIS_URL,
      STORE_NAMESPACE: uniqueNamespace('thread'),
      LOG_LEVEL: 'warn', // the work thread writes its lines to stderr itself
    }),
  );
  const logs: string[] = [];
  const fatal: Error[] = [];
  bot = await createThreadedDocsAgent(config, {
    logger: createLogger({ level: 'info', secrets: [], sink: (line) => logs.push(line) }),
    onFatal: (error) => fatal.push(error),
    ...(busyBacklog ? { busyBacklog } : {}),
  });
  const { port } = await bot.start();
  const url = `http://127.0.0.1:${port}`;
  const command = (text: string) =>
    sendSlashCommand(url, SECRETS.signingSecret, { text, response_url: slack.responseUrl() });
  return { url, command, logs, fatal };
}

describe('the work thread', () => {
  it('starts jobs and steers them from requests the main thread acknowledged', async () => {
    const { url, command, fatal } = await startThreaded();
    expect((await command('Document the new --dry-run flag')).json).toMatchObject({
      text: expect.stringContaining('Starting'),
    });
    const card = await slack.waitForCall('chat.postMessage');
    // "Starting…" is removed once the job is started and recorded: its thread is the job's from then on.
    expect((await slack.waitForCall('response_url')).args).toEqual({ delete_original: true });
    const channel = String(card.args.channel);
    const said = { user: 'U0BEA', text: 'Also mention the config file', thread_ts: String(card.response.ts) };
    const { ts } = slack.seedMessage(channel, said);
    const reply = await sendEvent(url, SECRETS.signingSecret, { type: 'message', channel, ts, ...said });
    expect(reply.status).toBe(200);
    expect((await slack.waitForCall('reactions.add')).args).toMatchObject({ channel, timestamp: ts });
    await expect.poll(() => mintlify.requestsFor('sendMessage').length).toBe(1);
    expect(mintlify.requestsFor('sendMessage')[0]?.body).toMatchObject({
      prompt: expect.stringContaining('Also mention the config file'),
    });
    expect(fatal).toEqual([]);
  });

  it('tells the main thread when requests are done, so a busy spell ends', async () => {
    const { command, logs } = await startThreaded(2);
    mintlify.injectFault('createJob', { delayMs: 1_000 }, 2);
    await Promise.all([command('Document the first flag'), command('Document the second flag')]);
    expect(((await command('Document the third flag')).json as { text?: string }).text).toMatch(/very busy/);
    // Both slow jobs finish on the work thread; its count reaches the main thread.
    await expect.poll(() => slack.callsTo('chat.postMessage').length, { timeout: 5_000 }).toBe(2);
    await expect
      .poll(async () => ((await command('Document the fourth flag')).json as { text?: string }).text)
      .toMatch(/Starting/);
    expect(logs.filter((line) => line.includes('new jobs are refused'))).toHaveLength(1);
  });

  it.runIf(existsSync('/proc/self/task'))(
    'runs at a lower priority than the acknowledging thread (Linux)',
    async () => {
      const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const threads = () =>
        readdirSync('/proc/self/task').map((id) =>
          niceOf(readFileSync(`/proc/self/task/${id}/stat`, 'utf8')),
        );
      expect(threads()).not.toContain(10);
      await startThreaded();
      expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(0);
      expect(threads().filter((nice) => nice === 10)).toHaveLength(1);
    },
  );
});
