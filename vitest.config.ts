import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Each test file starts its own app and fakes on port 0 and uses its own Redis namespace,
    // so files run in parallel safely.
    pool: 'forks',
  },
});
