/**
 * Vitest's global setup: every namespace a test run makes in Redis starts with
 * `docs-agent-test:<run>:` (see `uniqueNamespace`), and the run deletes them all when it ends, the
 * namespaces two bots shared (restarts, second instances) included. Another run on the same Redis
 * has a run id of its own, so its keys are left alone.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { dropNamespace, TEST_REDIS_URL, TEST_RUN_VARIABLE, testRunPrefix } from './redis.js';

export async function setup(): Promise<() => Promise<void>> {
  await redisAnswers();
  // Set before the test files' processes start: they inherit it.
  process.env[TEST_RUN_VARIABLE] ??= randomUUID().slice(0, 8);
  return async () => {
    // A run whose Redis is gone has failed already; nothing is left to delete.
    await dropNamespace(testRunPrefix()).catch(() => 0);
  };
}

/** Without Redis most files would fail one test at a time: the run stops at once, saying why. */
async function redisAnswers(): Promise<void> {
  const client = createClient({
    url: TEST_REDIS_URL,
    socket: { connectTimeout: 2_000, reconnectStrategy: false },
  });
  client.on('error', () => {}); // told below
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new Error(
      `The tests need Redis at ${new URL(TEST_REDIS_URL).host} (REDIS_URL, or 127.0.0.1:6379), which did not answer (${error instanceof Error ? error.message : String(error)}): start one (redis-server), or set REDIS_URL`,
    );
  } finally {
    if (client.isOpen) await client.quit();
  }
}
