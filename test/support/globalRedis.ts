/**
 * Vitest's global setup: every namespace a test run makes in Redis starts with
 * `docs-agent-test:<run>:` (see `uniqueNamespace`), and the run deletes them all when it ends, the
 * namespaces two bots shared (restarts, second instances) included. Another run on the same Redis
 * has a run id of its own, so its keys are left alone.
 */
import { randomUUID } from 'node:crypto';
import { dropNamespace, TEST_RUN_VARIABLE, testRunPrefix } from './redis.js';

export function setup(): () => Promise<void> {
  // Set before the test files' processes start: they inherit it.
  process.env[TEST_RUN_VARIABLE] ??= randomUUID().slice(0, 8);
  return async () => {
    // A run whose Redis is gone has failed already; nothing is left to delete.
    await dropNamespace(testRunPrefix()).catch(() => 0);
  };
}
