import { describe, expect, it } from 'vitest';
import { newJobMemory } from '../../src/jobs/checkJob.js';
import { type FollowCheck, followProcessor, followWorkerOptions } from '../../src/jobs/followJobs.js';
import type { JobRecord } from '../../src/jobs/jobRecord.js';
import type { JobsContext } from '../../src/jobs/jobsContext.js';
import { checkDelayMs, jittered, resumeDelayMs, retryDelayMs } from '../../src/jobs/pollSchedule.js';
import { createLogger } from '../../src/log.js';

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

  it('spreads the first checks of jobs found in the store over one interval', () => {
    expect([0, 0.25, 0.5, 1].map((random) => resumeDelayMs(TIMING, () => random))).toEqual([
      0, 1_250, 2_500, 5_000,
    ]);
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

describe('the follower’s backoff', () => {
  const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });

  it('waits longer after each failed check in a row, and goes back to the job’s cadence once a check works', async () => {
    let failing = true;
    const stored = {
      jobId: 'job-1',
      projectId: 'proj',
      status: 'active',
      round: 0,
      prLink: null,
      threadTs: null,
      cardTs: null,
      announced: [],
    } as unknown as JobRecord;
    const ctx = {
      config: {
        poll: { ...TIMING, concurrency: 1, requestsPerMinute: 60, slowAfterMs: 86_400_000 },
        mintlify: { projectId: 'proj' },
      },
      records: {
        get: async () => {
          if (failing) throw new Error('Redis did not answer');
          return stored;
        },
      },
      mintlify: { getJob: async () => ({ status: 'active', prLink: null }) },
      logger,
      stopping: new AbortController().signal,
      now: () => new Date(),
    } as unknown as JobsContext;
    // A random of 0.5 takes the jitter out.
    const check = followProcessor(ctx, () => 0.5);
    const run = async (data: FollowCheck) => {
      const result = await check(
        { id: 'job-job-1', name: 'check', data, attemptsMade: 0, addedAt: Date.now() },
        new AbortController().signal,
      );
      if (!result || !('again' in result)) throw new Error(`not checked again: ${JSON.stringify(result)}`);
      return result.again;
    };

    let data: FollowCheck = {
      jobId: 'job-1',
      memory: { ...newJobMemory('proj'), activeSince: Date.now() },
      failures: 0,
    };
    const waits: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const again = await run(data);
      waits.push(again.delayMs);
      data = again.data;
    }
    expect(waits).toEqual([10_000, 20_000, 40_000, 80_000]);

    failing = false;
    const working = await run(data);
    expect(working).toMatchObject({ delayMs: 5_000, data: { failures: 0 } });
    failing = true;
    expect((await run(working.data)).delayMs).toBe(10_000);
  });
});
