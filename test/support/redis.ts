import { randomUUID } from 'node:crypto';

/** The Redis the tests use: REDIS_URL (CI sets it), else the local default. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A namespace of its own for every test, so parallel test files never see each other's keys. */
export function uniqueNamespace(label = 'test'): string {
  return `docs-agent-test:${label}:${randomUUID().slice(0, 8)}`;
}
