/** When to check a job next: the cadence, its jitter and its backoff. Pure arithmetic on times. */

export interface PollTiming {
  /** How often a fresh job is checked (POLL_INTERVAL_MS). */
  intervalMs: number;
  /** The longest wait between two checks of a job that is not yet slow (POLL_MAX_INTERVAL_MS). */
  maxIntervalMs: number;
  /** How often a job past JOB_SLOW_AFTER_MS is checked (POLL_SLOW_INTERVAL_MS). */
  slowIntervalMs: number;
}

// A job is checked about every tenth of its age, so a change is noticed within ~10% of the time
// the job has already taken: a 1-minute job every 6 s, a 20-minute job every 2 min (the cap).
const AGE_FRACTION = 0.1;
// ±20%: jobs started (or resumed) together drift apart within a few rounds instead of polling in step.
const JITTER = 0.2;

/** The wait before the next check of a job that answered normally. */
export function checkDelayMs(timing: PollTiming, job: { ageMs: number; slow: boolean }): number {
  if (job.slow) return timing.slowIntervalMs;
  return clamp(job.ageMs * AGE_FRACTION, timing.intervalMs, timing.maxIntervalMs);
}

/**
 * The wait after `failures` failed checks in a row: doubling from the base interval, capped, and
 * never sooner than the job's normal cadence (a slow job stays slow while Mintlify struggles).
 */
export function retryDelayMs(timing: PollTiming, job: { ageMs: number; slow: boolean }, failures: number) {
  const backoff = Math.min(timing.maxIntervalMs, timing.intervalMs * 2 ** Math.min(failures, 20));
  return Math.max(backoff, checkDelayMs(timing, job));
}

/** Spreads a wait by ±JITTER. */
export function jittered(ms: number, random: () => number): number {
  return Math.round(ms * (1 - JITTER + 2 * JITTER * random()));
}

/** The first check of a job found in the store at start: anywhere in one interval, so 10,000 resumed jobs do not fire at once. */
export function resumeDelayMs(timing: PollTiming, random: () => number): number {
  return Math.round(timing.intervalMs * random());
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
