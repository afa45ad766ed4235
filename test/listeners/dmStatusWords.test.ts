import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';

let h: BotHarness;
afterEach(async () => h?.close());

const DM = 'D0ADA';

describe('asking the bot for your jobs in its DM', () => {
  it.each(['status please', 'hi, status?', 'please status'])(
    '“%s” (a greeting or a please around `status`, as help is read) lists your jobs, and starts no job',
    async (text) => {
      h = await startBot();
      const seeded = h.slack.seedMessage(DM, { user: 'U0ADA', text });
      await h.event({ type: 'message', channel: DM, channel_type: 'im', user: 'U0ADA', text, ts: seeded.ts });
      const answer = await h.slack.waitForCall('chat.postMessage');
      expect(String(answer.args.text)).toContain('You have no docs agent jobs yet');
      await h.bot.drained();
      // Each job spends one of the project's hourly agent uses, and may open a pull request.
      expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([]);
    },
  );
});
