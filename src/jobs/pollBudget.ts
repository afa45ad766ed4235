/**
 * The request budget for job checks, one token bucket per Mintlify project (POLL_REQUESTS_PER_MINUTE).
 * Mintlify documents no limit for reading a job, so this is our own politeness; a 429 is the
 * service's word and wins: the project pauses (for Retry-After, or a growing wait without one)
 * and its rate halves, then creeps back up with every check that succeeds.
 *
 * The budget is per bot instance: two instances sharing Redis each spend their own.
 */

export interface PollBudgetOptions {
  requestsPerMinute: number;
  /** The first pause after a 429 without Retry-After; it doubles with each 429 in a row. */
  basePauseMs: number;
  maxPauseMs: number;
}

// A Retry-After past an hour is more likely a wrong header than a real request; do not sleep on it for days.
const LONGEST_RETRY_AFTER_MS = 3_600_000;
// After a 429 the rate never drops below a twentieth: slowed down, never starved.
const SLOWEST_FRACTION = 1 / 20;
// Each success gives back a tenth of the configured rate (additive increase after a multiplicative cut).
const RECOVERY_FRACTION = 1 / 10;

// Refills add up fractions of a token; without slack, 0.1 × 10 falling short of 1 would skip a beat.
const EPSILON = 1e-9;

interface Bucket {
  tokens: number;
  refilledAt: number;
  perMs: number;
  pausedUntil: number;
  strikes: number;
}

export class PollBudget {
  private readonly buckets = new Map<string, Bucket>();
  private readonly fullPerMs: number;
  // A tenth of a second's worth of checks: absorbs timer slop, yet a stalled event loop (a long GC,
  // a busy moment) cannot turn into a burst above the budget when it resumes.
  private readonly capacity: number;

  constructor(private readonly options: PollBudgetOptions) {
    this.fullPerMs = options.requestsPerMinute / 60_000;
    this.capacity = Math.max(1, options.requestsPerMinute / 600);
  }

  /** Takes one check's token: 0 when taken, otherwise how long until one is free (nothing taken). */
  take(projectId: string, now: number): number {
    const bucket = this.refilled(projectId, now);
    if (now < bucket.pausedUntil) return bucket.pausedUntil - now;
    if (bucket.tokens >= 1 - EPSILON) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / bucket.perMs));
  }

  /** Mintlify answered 429 for this project. */
  slowDown(projectId: string, retryAfterMs: number | undefined, now: number): void {
    const bucket = this.refilled(projectId, now);
    bucket.strikes += 1;
    const pause =
      retryAfterMs === undefined
        ? Math.min(this.options.maxPauseMs, this.options.basePauseMs * 2 ** Math.min(bucket.strikes - 1, 20))
        : Math.min(retryAfterMs, LONGEST_RETRY_AFTER_MS);
    bucket.pausedUntil = Math.max(bucket.pausedUntil, now + pause);
    bucket.perMs = Math.max(this.fullPerMs * SLOWEST_FRACTION, bucket.perMs / 2);
    bucket.tokens = 0;
  }

  /** A check of this project got an answer: the rate recovers step by step. */
  recovered(projectId: string): void {
    const bucket = this.buckets.get(projectId);
    if (!bucket) return;
    bucket.strikes = 0;
    bucket.perMs = Math.min(this.fullPerMs, bucket.perMs + this.fullPerMs * RECOVERY_FRACTION);
  }

  /** Checks per minute this project is allowed right now (for logs and tests). */
  currentPerMinute(projectId: string): number {
    return (this.buckets.get(projectId)?.perMs ?? this.fullPerMs) * 60_000;
  }

  private refilled(projectId: string, now: number): Bucket {
    let bucket = this.buckets.get(projectId);
    if (!bucket) {
      bucket = {
        tokens: this.capacity,
        refilledAt: now,
        perMs: this.fullPerMs,
        pausedUntil: 0,
        strikes: 0,
      };
      this.buckets.set(projectId, bucket);
    }
    const from = Math.max(bucket.refilledAt, bucket.pausedUntil);
    if (now > from) bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - from) * bucket.perMs);
    bucket.refilledAt = Math.max(bucket.refilledAt, now);
    return bucket;
  }
}
