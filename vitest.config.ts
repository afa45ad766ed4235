import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Gives the run an id that starts all its Redis namespaces, and deletes them when it ends.
    globalSetup: ['test/support/globalRedis.ts'],
    // Generous: a test passes as soon as what it awaits holds, and several start bots in processes of
    // their own (node or npm, and tsx compiling the bot), which on a busy machine takes many seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A condition awaited with expect.poll may take a while when the machine is busy (test files run
    // in parallel): it passes as soon as it holds.
    expect: { poll: { timeout: 10_000 } },
    // Each test file starts its own app and fakes on port 0 and uses its own Redis namespace,
    // so files run in parallel safely.
    pool: 'forks',
    // A fork keeps the modules it loaded from one test file to the next (Bolt, BullMQ and zod are
    // loaded once per fork, not once per file: a third of the suite's CPU). The bot keeps no state
    // in its modules; every app, fake and namespace is made by the test that uses it.
    isolate: false,
    // Most of a test's time is spent waiting on sockets, timers and the bots it starts, not on the
    // CPU: six files at once keep two cores busy most of the run.
    maxWorkers: 6,
  },
});
