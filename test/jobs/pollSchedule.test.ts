import { describe, expect, it } from 'vitest';
import { followWorkerOptions } from '../../src/jobs/followJobs.js';
import { checkDelayMs, jittered, retryDelayMs } from '../../src/jobs/pollSchedule.js';

const TIMING = { intervalMs: 5_000, maxIntervalMs: 120_000, slowIntervalMs: 900_000 };

describe('the poll schedule', () => {
  it('checks a fresh job every interval and a long-running one less often, up to the cap', () => {
    expect(checkDelayMs(TIMING, { ageMs: 0, slow: false })).toBe(5_000);
    expect(checkDelayMs(TIMING, { ageMs: 10 * 60_000, slow: false })).toBe(60_000);
    expect(checkDelayMs(TIMING, { ageMs: 5 * 3_600_000, slow: false })).toBe(120_000);
    expect(checkDelayMs(TIMING, { ageMs: 30 * 3_600_000, slow: true })).toBe(900_000);
  });

  it('backs off after failures, never sooner than the normal cadence', () => {
    const fresh = { ageMs: 0, slow: false };
    expect([1, 2, 3, 10].map((n) => retryDelayMs(TIMING, fresh, n))).toEqual([
      10_000, 20_000, 40_000, 120_000,
    ]);
    expect(retryDelayMs(TIMING, { ageMs: 0, slow: true }, 1)).toBe(900_000);
  });

  it('spreads waits by ±20%', () => {
    expect(jittered(10_000, () => 0)).toBe(8_000);
    expect(jittered(10_000, () => 1)).toBe(12_000);
  });
});

describe('the request budget of job checks', () => {
  const poll = (requestsPerMinute: number) => ({
    ...TIMING,
    concurrency: 8,
    requestsPerMinute,
    slowAfterMs: 86_400_000,
  });

  it.each([1, 7, 60, 100, 120, 999, 6_000])(
    'spreads POLL_REQUESTS_PER_MINUTE=%i over the minute and never goes above it',
    (perMinute) => {
      const { limiter } = followWorkerOptions(poll(perMinute));
      if (!limiter) throw new Error('no limiter');
      const perMinuteAllowed = (limiter.max * 60_000) / limiter.durationMs;
      expect(perMinuteAllowed).toBeLessThanOrEqual(perMinute * 1.01);
      expect(perMinuteAllowed).toBeGreaterThanOrEqual(perMinute * 0.9);
      // Small windows: a sliding 10-s window never holds more than 1 % over the budget.
      if (perMinute >= 600) expect(limiter.max).toBeLessThanOrEqual((perMinute / 6) * 0.01);
    },
  );
});
