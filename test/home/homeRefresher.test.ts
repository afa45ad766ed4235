import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HomeRefresher } from '../../src/home/homeRefresher.js';
import { createLogger } from '../../src/log.js';

const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });

describe('HomeRefresher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('refreshes a person’s Home at once, then at most once per interval, with the last change included', async () => {
    const published: string[] = [];
    const refresher = new HomeRefresher({
      publish: async (user) => void published.push(user),
      logger,
      minIntervalMs: 3_000,
    });
    for (let i = 0; i < 5; i += 1) refresher.refresh('U0ADA');
    refresher.refresh('U0BEA');
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(['U0ADA', 'U0BEA']);

    await vi.advanceTimersByTimeAsync(2_999);
    expect(published).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(published).toEqual(['U0ADA', 'U0BEA', 'U0ADA']); // one trailing refresh for the burst

    await vi.advanceTimersByTimeAsync(10_000);
    refresher.refresh('U0ADA'); // a quiet while later: at once again
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toHaveLength(4);
  });

  it('keeps each person’s interval while other people’s Homes refresh', async () => {
    const published: string[] = [];
    const refresher = new HomeRefresher({
      publish: async (user) => void published.push(user),
      logger,
      minIntervalMs: 3_000,
    });
    refresher.refresh('U0ADA');
    await vi.advanceTimersByTimeAsync(1_000);
    refresher.refresh('U0BEA');
    await vi.advanceTimersByTimeAsync(1_000);
    refresher.refresh('U0ADA'); // within its interval, whoever refreshed since
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(['U0ADA', 'U0BEA']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(published).toEqual(['U0ADA', 'U0BEA', 'U0ADA']);
  });

  it('publishes when the person opens the tab, whatever the interval, and stops cleanly', async () => {
    const published: string[] = [];
    const refresher = new HomeRefresher({ publish: async (user) => void published.push(user), logger });
    refresher.refresh('U0ADA');
    await vi.advanceTimersByTimeAsync(0);
    refresher.refresh('U0ADA'); // pending
    await refresher.publishNow('U0ADA');
    expect(published).toEqual(['U0ADA', 'U0ADA']);
    refresher.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(published).toHaveLength(2);
  });

  it('publishes for one person one at a time, in order; those asked while one waits become one', async () => {
    const events: string[] = [];
    let publishes = 0;
    let endFirst: () => void = () => {};
    const refresher = new HomeRefresher({
      publish: async (user) => {
        const n = (publishes += 1);
        events.push(`start ${user} ${n}`);
        if (n === 1) await new Promise<void>((resolve) => (endFirst = resolve)); // Slack retrying
        events.push(`end ${user} ${n}`);
      },
      logger,
    });
    const first = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(0);
    const second = refresher.publishNow('U0ADA');
    const third = refresher.publishNow('U0ADA');
    await refresher.publishNow('U0BEA'); // someone else's does not wait
    expect(events).toEqual(['start U0ADA 1', 'start U0BEA 2', 'end U0BEA 2']);

    endFirst();
    await Promise.all([first, second, third]);
    expect(events.slice(3)).toEqual(['end U0ADA 1', 'start U0ADA 3', 'end U0ADA 3']);
  });

  it('waits a few seconds at most for a publish that hangs', async () => {
    const started: number[] = [];
    let publishes = 0;
    const refresher = new HomeRefresher({
      publish: async () => {
        publishes += 1;
        started.push(publishes);
        if (publishes === 1) await new Promise<void>(() => {}); // never answered
      },
      logger,
      previousWaitMs: 5_000,
    });
    void refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(0);
    const next = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(4_999);
    expect(started).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    await next;
    expect(started).toEqual([1, 2]);
  });

  it('publishes once more when a publish it stopped waiting for lands after the newer one', async () => {
    let state = 'old';
    const landed: string[] = [];
    let publishes = 0;
    const refresher = new HomeRefresher({
      publish: async () => {
        publishes += 1;
        const shown = state; // read when it starts, as publishHome reads the records
        // The first is slowed by Slack's retries past the wait of the next.
        if (publishes === 1) await new Promise((resolve) => setTimeout(resolve, 300));
        landed.push(shown);
      },
      logger,
      previousWaitMs: 100,
    });
    const first = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(0);
    state = 'new';
    const second = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all([first, second]);
    // The old state landed last; one more publish shows the newest again.
    expect(landed).toEqual(['new', 'old', 'new']);
  });

  it('does not publish again for slow publishes that fail, nor for one that lands before the newer', async () => {
    let publishes = 0;
    const refresher = new HomeRefresher({
      publish: async () => {
        publishes += 1;
        await new Promise((resolve) => setTimeout(resolve, 300)); // every one slower than the wait
        if (publishes % 2 === 1) throw new Error('Slack is down');
      },
      logger,
      previousWaitMs: 100,
    });
    const first = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(0);
    const second = refresher.publishNow('U0ADA');
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all([first, second]);
    // The first failed; the second landed after it: two in all.
    expect(publishes).toBe(2);
  });
});
