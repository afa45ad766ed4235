import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';

let h: BotHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a stop without Redis while more requests wait than the worker runs at once', () => {
  it('runs the ones still waiting in the grace: each person told "its card will appear here" gets a card', async () => {
    h = await startBot({ memory: true });
    const bot = h;
    // Mintlify takes a second to create each job: the worker's 16 slots fill, the rest wait their turn.
    bot.mintlify.injectFault('createJob', { delayMs: 1_000 }, 100);
    const asked = 20;
    for (let n = 0; n < asked; n++) {
      const ack = await bot.command(`Document command ${n}`, { channel_id: 'C0DOCS' });
      expect(ack.status).toBe(200);
    }
    await expect.poll(() => bot.mintlify.requestsFor('createJob').length).toBeGreaterThanOrEqual(16);

    // A restart: no other process holds what waits in this one's memory.
    await bot.stopBot();

    expect(bot.mintlify.requestsFor('createJob')).toHaveLength(asked);
    const cards = bot.slack
      .callsTo('chat.postMessage')
      .filter((call) => String(call.args.text ?? '').includes('Document command'));
    expect(cards).toHaveLength(asked);
  });
});
