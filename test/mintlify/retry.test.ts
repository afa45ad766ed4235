import { describe, expect, it } from 'vitest';
import { backoffDelayMs, parseRetryAfter, withRetry } from '../../src/mintlify/retry.js';

const policy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1_000, maxElapsedMs: 5_000 };

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
  });

  it('reads an HTTP-date relative to now', () => {
    expect(parseRetryAfter('Sat, 01 Mar 2025 12:00:30 GMT', now)).toBe(30_000);
  });

  it('takes no wait at all (0, a date already past) as no advice, so the caller backs off', () => {
    expect(parseRetryAfter('0', now)).toBeUndefined();
    expect(parseRetryAfter('Sat, 01 Mar 2025 11:00:00 GMT', now)).toBeUndefined();
  });

  it('ignores a missing or unreadable header', () => {
    for (const value of [undefined, '', 'soon', '1.5', '-3'])
      expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('backoffDelayMs (full jitter)', () => {
  it('waits between 0 and an exponential ceiling capped at maxDelayMs', () => {
    expect(backoffDelayMs(1, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(1, policy, () => 0.999)).toBe(99);
    expect(backoffDelayMs(3, policy, () => 0.999)).toBe(399);
    expect(backoffDelayMs(20, policy, () => 0.999)).toBe(999);
  });
});

describe('withRetry', () => {
  /** A clock that only moves when the retry loop sleeps. */
  function fakeClock() {
    let now = 0;
    const waits: number[] = [];
    return {
      waits,
      now: () => now,
      sleep: async (ms: number) => {
        waits.push(ms);
        now += ms;
      },
    };
  }

  it('throws the last error when the next wait would pass the budget', async () => {
    const clock = fakeClock();
    let attempts = 0;

    const result = withRetry(
      async () => {
        attempts += 1;
        throw new Error(`failure ${attempts}`);
      },
      {
        policy: { ...policy, maxElapsedMs: 2_500 },
        shouldRetry: () => true,
        requestedDelayMs: () => 1_000,
        ...clock,
      },
    );

    await expect(result).rejects.toThrow('failure 3');
    expect(clock.waits).toEqual([1_000, 1_000]);
  });

  it('does not retry what shouldRetry refuses', async () => {
    const clock = fakeClock();
    let attempts = 0;

    const result = withRetry(
      async () => {
        attempts += 1;
        throw new Error('final');
      },
      { policy, shouldRetry: () => false, ...clock },
    );

    await expect(result).rejects.toThrow('final');
    expect(attempts).toBe(1);
    expect(clock.waits).toEqual([]);
  });

  it('throws the last error, not the reason, when a wait is cut short (the bot stopping)', async () => {
    let attempts = 0;

    const result = withRetry(
      async () => {
        attempts += 1;
        throw new Error(`failure ${attempts}`);
      },
      {
        policy,
        shouldRetry: () => true,
        sleep: () => Promise.reject(new DOMException('This operation was aborted', 'AbortError')),
      },
    );

    await expect(result).rejects.toThrow('failure 1');
    expect(attempts).toBe(1);
  });
});
