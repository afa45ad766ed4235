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

it(
  'SIGTERM while Redis is away and no work runs: the bot stops cleanly (exit 0), not at its hard deadline',
  { timeout: 40_000 },
  async () => {
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
    const namespace = uniqueNamespace('stop-away');
    const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: redis.url, STORE_NAMESPACE: namespace }));
    children.push(bot.child);
    await bot.listening();
    await bot.printed(/docs-agent worker is running/);
    // The start's own work (the queues' first check) done: on a busy machine it may still run.
    const raw = createClient({ url: redis.url });
    await raw.connect();
    const running = async () => {
      let active = 0;
      for await (const keys of raw.scanIterator({ MATCH: `${namespace}:*:active`, COUNT: 100 })) {
        for (const key of keys) active += await raw.lLen(key);
      }
      return active;
    };
    await expect.poll(running, { timeout: 10_000 }).toBe(0);
    await raw.quit();

    await redis.stop();
    await bot.printed(/Redis is unreachable/);
    bot.child.kill('SIGTERM');

    // Nothing runs, so nothing has to be handed back: no reason to wait for main.ts's hard exit (code 1 at 9.5 s).
    expect(await bot.exited).toBe(0);
    expect(bot.output()).not.toContain('Queues closed before their workers did');
  },
);

it(
  'SIGTERM while Redis takes no more clients (its maxclients reached) and no work runs: the bot stops cleanly (exit 0)',
  { timeout: 40_000 },
  async () => {
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
    const namespace = uniqueNamespace('stop-full-clients');
    const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: redis.url, STORE_NAMESPACE: namespace }));
    children.push(bot.child);
    await bot.listening();
    await bot.printed(/docs-agent worker is running/);
    // Another process's client holds the one connection Redis now takes; the bot's are dropped.
    const other = createClient({ url: redis.url });
    await other.connect();
    cleanups.push(async () => {
      await other.configSet('maxclients', '10000');
      await other.quit();
    });
    const running = async () => {
      let active = 0;
      for await (const keys of other.scanIterator({ MATCH: `${namespace}:*:active`, COUNT: 100 })) {
        for (const key of keys) active += await other.lLen(key);
      }
      return active;
    };
    await expect.poll(running, { timeout: 10_000 }).toBe(0);
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
    expect(await bot.exited).toBe(0);
    expect(bot.output()).not.toContain('stopped by an unexpected error');
  },
);
