import { afterEach, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';

let h: BotHarness | undefined;
const warnings: string[] = [];
const heard = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
afterEach(async () => {
  process.off('warning', heard);
  await h?.close();
});

it('many starts waiting out an unreachable Mintlify at once print no "possible memory leak" warning', async () => {
  process.on('warning', heard);
  // Nothing listens on port 9: every create fails to connect, and is tried again after a wait.
  h = await startBot({
    env: { MINTLIFY_API_URL: 'http://127.0.0.1:9' },
    mintlifyOptions: { retry: { baseDelayMs: 200, maxDelayMs: 200, maxElapsedMs: 1_000 } },
  });
  const harness = h;
  await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      harness.command(`Document flag ${n}`, {
        user_id: `U0PERSON${n}`,
        response_url: harness.slack.responseUrl(`p${n}`),
      }),
    ),
  );
  await expect.poll(() => harness.slack.callsTo('response_url').length, { timeout: 20_000 }).toBe(12);
  expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
});
