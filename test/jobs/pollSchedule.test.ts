import { describe, expect, it } from 'vitest';
import type { CheckResult, JobMemory } from '../../src/jobs/checkJob.js';
import { JobFollower } from '../../src/jobs/followJobs.js';
import { PollBudget } from '../../src/jobs/pollBudget.js';
import { type Clock, checkDelayMs, jittered, retryDelayMs } from '../../src/jobs/pollSchedule.js';
import { createLogger } from '../../src/log.js';

/** A clock whose time moves only when the test says, so minutes of scheduling run in milliseconds. */
class ManualClock implements Clock {
  private time = 0;
  private readonly timers = new Map<number, { at: number; run: () => void }>();
  private lastId = 0;

  now() {
    return this.time;
  }
  setTimeout(run: () => void, ms: number) {
    this.lastId += 1;
    this.timers.set(this.lastId, { at: this.time + ms, run });
    return this.lastId;
  }
  clearTimeout(handle: unknown) {
    this.timers.delete(handle as number);
  }
  /** Runs every timer due within `ms`, in order, letting promises settle in between. */
  async advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      let next: [number, { at: number; run: () => void }] | undefined;
      for (const entry of this.timers) if (!next || entry[1].at < next[1].at) next = entry;
      if (!next || next[1].at > end) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].run();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.time = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const TIMING = { intervalMs: 5_000, maxIntervalMs: 120_000, slowIntervalMs: 900_000 };
const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });

function follower(
  clock: ManualClock,
  check: (jobId: string, memory: JobMemory, now: number) => Promise<CheckResult>,
  overrides: { concurrency?: number; requestsPerMinute?: number; ids?: string[] } = {},
) {
  return new JobFollower({
    timing: TIMING,
    concurrency: overrides.concurrency ?? 8,
    requestsPerMinute: overrides.requestsPerMinute ?? 120,
    defaultProjectId: 'proj',
    check,
    unfinishedIds: async () => overrides.ids ?? [],
    logger,
    clock,
  });
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `job-${i}`);

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

describe('the poll budget', () => {
  it('lets through the configured checks per minute', () => {
    const budget = new PollBudget({ requestsPerMinute: 60, basePauseMs: 5_000, maxPauseMs: 120_000 });
    let taken = 0;
    for (let now = 0; now < 60_000; now += 100) if (budget.take('proj', now) === 0) taken += 1;
    expect(taken).toBeGreaterThanOrEqual(59);
    expect(taken).toBeLessThanOrEqual(61);
  });

  it('pauses a project for Retry-After, and for a growing wait without one', () => {
    const budget = new PollBudget({ requestsPerMinute: 600, basePauseMs: 5_000, maxPauseMs: 120_000 });
    budget.slowDown('proj', 30_000, 0);
    expect(budget.take('proj', 29_000)).toBe(1_000);
    expect(budget.take('other', 29_000)).toBe(0); // another project is not slowed
    budget.slowDown('proj', undefined, 40_000);
    expect(budget.take('proj', 40_000)).toBe(10_000); // the second 429 in a row: 2 × 5 s
    expect(budget.currentPerMinute('proj')).toBe(150);
    budget.recovered('proj');
    expect(budget.currentPerMinute('proj')).toBe(210);
  });
});

describe('the job follower', () => {
  it('never runs more checks at once than its concurrency', async () => {
    const clock = new ManualClock();
    let running = 0;
    let most = 0;
    const check = async (): Promise<CheckResult> => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => clock.setTimeout(() => resolve(undefined), 2_000));
      running -= 1;
      return { kind: 'following' };
    };
    const f = follower(clock, check, { concurrency: 3, requestsPerMinute: 100_000, ids: ids(50) });
    await f.start();
    await clock.advance(60_000);
    expect(most).toBe(3);
    f.stop();
  });

  it('keeps to the request budget however many jobs are due', async () => {
    const clock = new ManualClock();
    const at: number[] = [];
    const check = async (): Promise<CheckResult> => {
      at.push(clock.now());
      return { kind: 'following' };
    };
    const f = follower(clock, check, { requestsPerMinute: 120, ids: ids(1_000) });
    await f.start();
    await clock.advance(10 * 60_000);
    f.stop();
    // Ten minutes at 120 a minute, plus the one token the bucket starts with.
    expect(at.length).toBeGreaterThanOrEqual(1_190);
    expect(at.length).toBeLessThanOrEqual(1_202);
    const perMinute = (minute: number) => at.filter((t) => t >= minute * 60_000 && t < (minute + 1) * 60_000);
    for (let minute = 1; minute < 10; minute += 1) expect(perMinute(minute).length).toBeLessThanOrEqual(121);
  });

  it('spreads jobs resumed together so they do not poll in lockstep', async () => {
    const clock = new ManualClock();
    const at = new Map<string, number[]>();
    const check = async (jobId: string): Promise<CheckResult> => {
      at.set(jobId, [...(at.get(jobId) ?? []), clock.now()]);
      return { kind: 'following' };
    };
    const f = follower(clock, check, { requestsPerMinute: 100_000, ids: ids(20) });
    await f.start();
    await clock.advance(60_000);
    f.stop();
    const thirdChecks = new Set([...at.values()].map((times) => times[2]));
    expect(thirdChecks.size).toBe(20);
  });

  it('pauses a project after a 429 and then checks its jobs again', async () => {
    const clock = new ManualClock();
    const at: number[] = [];
    let limited = true;
    const check = async (): Promise<CheckResult> => {
      at.push(clock.now());
      if (limited) {
        limited = false;
        return { kind: 'rate_limited', retryAfterMs: 60_000 };
      }
      return { kind: 'following' };
    };
    const f = follower(clock, check, { requestsPerMinute: 6_000, ids: ids(5) });
    await f.start();
    await clock.advance(59_000);
    expect(at).toHaveLength(1);
    await clock.advance(30_000);
    expect(at.length).toBeGreaterThan(5);
    f.stop();
  });

  it('stops following a finished job, and follows it again when it is reopened', async () => {
    const clock = new ManualClock();
    let checks = 0;
    let finished = true;
    const check = async (): Promise<CheckResult> => {
      checks += 1;
      return finished ? { kind: 'done', why: 'finished' } : { kind: 'following' };
    };
    const f = follower(clock, check, { ids: ['job-1'] });
    await f.start();
    await clock.advance(60_000);
    expect(checks).toBe(1);
    expect(f.size).toBe(0);

    finished = false;
    f.follow('job-1');
    await clock.advance(60_000);
    expect(checks).toBeGreaterThan(5);
    f.stop();
  });
});
