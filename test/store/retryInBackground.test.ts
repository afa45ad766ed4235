import { afterEach, describe, expect, it, vi } from 'vitest';
import { retryInBackground } from '../../src/store/retryInBackground.js';

type RetryOptions = Parameters<typeof retryInBackground>[1];
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';

/** vi.waitFor's own default (1 s) is short for a busy machine. */
const WAIT = { timeout: 10_000 };

const redisAway = () => new StoreTimeoutError('a write', 5_000);

/** Tried every 5 ms for a minute while Redis is away, wanted throughout: each test changes what it is about. */
function tries(options: Partial<RetryOptions> & Pick<RetryOptions, 'giveUp'>): RetryOptions {
  return { everyMs: 5, forMs: 60_000, wanted: () => true, retryOn: isStoreUnavailable, ...options };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('retryInBackground', () => {
  it('tries again while Redis is away, until the work is done', async () => {
    const giveUp = vi.fn();
    let calls = 0;
    let done = false;
    retryInBackground(
      async () => {
        calls += 1;
        if (calls < 3) throw redisAway();
        done = true;
        return true;
      },
      tries({ wanted: () => !done, giveUp }),
    );
    await vi.waitFor(() => expect(done).toBe(true), WAIT);
    expect(calls).toBe(3);
    expect(giveUp).not.toHaveBeenCalled();
  });

  it('gives up at once on an error it does not retry, saying which', async () => {
    const giveUp = vi.fn();
    const attempt = vi.fn(async (): Promise<true> => {
      throw new Error('the record does not fit');
    });
    retryInBackground(attempt, tries({ giveUp }));
    await vi.waitFor(() => expect(giveUp).toHaveBeenCalledWith('Error: the record does not fit'), WAIT);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('gives up after its time with the last reason it was not done', async () => {
    const giveUp = vi.fn();
    retryInBackground(async () => 'its start kept it busy', tries({ forMs: 30, giveUp }));
    await vi.waitFor(() => expect(giveUp).toHaveBeenCalledWith('its start kept it busy'), WAIT);
    expect(giveUp).toHaveBeenCalledTimes(1);
  });

  it('stops quietly once the work is no longer wanted (the bot is stopping)', async () => {
    const giveUp = vi.fn();
    let wanted = true;
    const attempt = vi.fn(async () => {
      wanted = false;
      return 'not yet';
    });
    retryInBackground(attempt, tries({ wanted: () => wanted, retryOn: () => true, giveUp }));
    await vi.waitFor(() => expect(attempt).toHaveBeenCalledTimes(1), WAIT);
    // The next turn finds it unwanted, and neither tries nor gives up: the attempt after it would be the third.
    const again = vi.fn(async (): Promise<true> => true);
    retryInBackground(again, tries({ everyMs: 20, retryOn: () => true, giveUp }));
    await vi.waitFor(() => expect(again).toHaveBeenCalledTimes(1), WAIT);
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(giveUp).not.toHaveBeenCalled();
  });

  it('waits everyMs between tries while Redis is away, rather than asking it again and again', async () => {
    vi.useFakeTimers();
    const giveUp = vi.fn();
    let calls = 0;
    // Done by the tenth try, however soon it comes: a retry that did not wait would get there at once.
    const attempt = async (): Promise<true> => {
      calls += 1;
      if (calls < 10) throw redisAway();
      return true;
    };
    retryInBackground(attempt, tries({ everyMs: 2_000, giveUp }));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    expect(giveUp).not.toHaveBeenCalled();
  });
});
