import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { createNodeRedisClient, Queue } from 'bullmq';
import { REQUESTS_QUEUE } from '../../src/queue/queueNames.js';

/** The Redis the tests use: REDIS_URL (CI sets it), else the local default. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Names this test run (set by the global setup, globalRedis.ts); its namespaces start with it. */
export const TEST_RUN_VARIABLE = 'DOCS_AGENT_TEST_RUN';

/** What every namespace of this test run starts with: the run deletes them all when it ends. */
export function testRunPrefix(): string {
  return `docs-agent-test:${process.env[TEST_RUN_VARIABLE] ?? 'local'}:`;
}

/** A namespace of its own for every test, so parallel test files never see each other's keys. */
export function uniqueNamespace(label = 'test'): string {
  return `${testRunPrefix()}${label}:${randomUUID().slice(0, 8)}`;
}

/** Deletes every key whose name starts with `prefix` (a test's or a bench's namespace); returns how many. */
export async function dropNamespace(prefix: string, url = TEST_REDIS_URL): Promise<number> {
  const client = createClient({ url });
  await client.connect();
  let dropped = 0;
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) {
      const batch = ([] as string[]).concat(keys);
      if (batch.length === 0) continue;
      await client.unlink(batch);
      dropped += batch.length;
    }
  } finally {
    await client.quit();
  }
  return dropped;
}

/** The keys matching `pattern` (a SCAN pattern), sorted. */
export async function redisKeys(pattern: string, url = TEST_REDIS_URL): Promise<string[]> {
  const client = createClient({ url });
  await client.connect();
  const found: string[] = [];
  try {
    for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 1_000 }))
      found.push(...([] as string[]).concat(keys));
  } finally {
    await client.quit();
  }
  return found.sort();
}

/**
 * Where the bot's queue job `id` for a Slack request (`thread_reply-<event id>`, …) stands, as BullMQ
 * keeps it in the bot's namespace: `completed` once done with, `delayed` while it waits to run again.
 */
export async function requestState(namespace: string, id: string, url = TEST_REDIS_URL): Promise<string> {
  const client = createClient({ url });
  await client.connect();
  const requests = new Queue(REQUESTS_QUEUE, {
    connection: createNodeRedisClient(client),
    prefix: namespace,
  });
  try {
    return await requests.getJobState(id);
  } finally {
    await requests.close();
    await client.quit();
  }
}
