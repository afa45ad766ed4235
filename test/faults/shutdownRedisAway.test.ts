import type { ChildProcess } from 'node:child_process';
import { createClient } from '@keyv/redis';
import { afterEach, expect, it } from 'vitest';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from '../support/botHarness.js';
import { botEnv, runBot } from '../support/botProcess.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { uniqueNamespace } from '../support/redis.js';

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The bot, run on a Redis of its own and idle: the start's own work (the queues' first check) done, as
 * `client`, another connection to that Redis (closed after the test, unless the test closes it), sees.
 * On a busy machine that work may still run when the bot says it is running.
 */
async function idleBot(name: string) {
  const slack: SlackFake = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify: MintlifyFake = await startMintlifyFake({
    apiKey: SECRETS.mintlifyKey,
    projectId: PROJECT_ID,
  });
  const redis: PrivateRedis = await startPrivateRedis();
  cleanups.push(
    () => slack.close(),
    () => mintlify.close(),
    () => redis.close(),
  );
  const namespace = uniqueNamespace(name);
  const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: redis.url, STORE_NAMESPACE: namespace }));
  children.push(bot.child);
  await bot.listening();
  await bot.printed(/docs-agent worker is running/);
  const client = createClient({ url: redis.url });
  await client.connect();
  cleanups.push(async () => {
    if (client.isOpen) await client.quit();
  });
  const running = async () => {
    let active = 0;
    for await (const keys of client.scanIterator({ MATCH: `${namespace}:*:active`, COUNT: 100 })) {
      for (const key of keys) active += await client.lLen(key);
    }
    return active;
  };
  await expect.poll(running, { timeout: 10_000 }).toBe(0);
  return { bot, redis, client };
}

it(
  'SIGTERM while Redis is away and no work runs: the bot stops cleanly (exit 0), not at its hard deadline',
  { timeout: 40_000 },
  async () => {
    const { bot, redis, client } = await idleBot('stop-away');
    await client.quit();

    await redis.stop();
    await bot.printed(/Redis is unreachable/);
    bot.child.kill('SIGTERM');

    // Nothing runs, so nothing has to be handed back: no reason to wait for main.ts's hard exit (code 1 at 9.5 s).
    const code = await bot.exited;
    expect(code, bot.output()).toBe(0);
    expect(bot.output()).not.toContain('Queues closed before their workers did');
  },
);

it(
  'SIGTERM while Redis takes no more clients (its maxclients reached) and no work runs: the bot stops cleanly (exit 0)',
  { timeout: 40_000 },
  async () => {
    // Another process's client holds the one connection Redis now takes; the bot's are dropped.
    const { bot, client: other } = await idleBot('stop-full-clients');
    cleanups.push(() => other.configSet('maxclients', '10000'));
    await other.configSet('maxclients', '1');
    await other.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
    await bot.printed(/Redis is unreachable/);
    // Every connection of the bot's is trying again, and refused.
    const rejected = async () =>
      Number(/rejected_connections:(\d+)/.exec(await other.info('stats'))?.[1] ?? 0);
    await expect.poll(rejected, { timeout: 10_000 }).toBeGreaterThanOrEqual(20);
    bot.child.kill('SIGTERM');

    // Redis is away to the bot as if it were down: nothing runs, so nothing has to be handed back, and
    // nothing crashes (a closed queue worker's connection, still retrying, must not throw its error).
    const code = await bot.exited;
    expect(code, bot.output()).toBe(0);
    expect(bot.output()).not.toContain('stopped by an unexpected error');
  },
);
