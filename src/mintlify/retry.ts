/**
 * When and how long to wait before trying a call to Mintlify again: exponential backoff with
 * full jitter, `Retry-After` honoured (a longer wait than one retry may take goes to the caller),
 * all inside one elapsed-time budget.
 * Which errors are worth a retry is the caller's decision (`shouldRetry`).
 *
 * Ours rather than undici's RetryAgent or p-retry: undici cuts a long `Retry-After` short and asks
 * again (another 429, one more of the organization's hourly requests), and neither spreads retries
 * with full jitter or hands a wait longer than it retries for back to the caller.
 */

export interface RetryPolicy {
  /** Attempts in total, the first one included. */
  maxAttempts: number;
  baseDelayMs: number;
  /** No single wait is longer: a `Retry-After` asking for more goes to the caller. */
  maxDelayMs: number;
  /** Give up rather than start a wait that would end after this much time since the first attempt. */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxElapsedMs: 60_000,
};

export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Full jitter (a random wait between 0 and the exponential ceiling) spreads the retries of many
 * callers hit by the same outage instead of having them come back in lockstep.
 * `retryNumber` is 1 for the wait after the first failure.
 */
export function backoffDelayMs(
  retryNumber: number,
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retryNumber - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` is either delay-seconds or an HTTP-date (RFC 9110 §10.2.3). Returns milliseconds
 * from `nowMs`, more than 0; undefined when the header is missing, unreadable, or asks for no wait.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  // No wait at all (0, or a date already past) is no advice: the caller's own backoff applies, or
  // a rate-limited loop would ask again at once, as fast as the service answers.
  const positive = (ms: number) => (ms > 0 ? ms : undefined);
  if (/^\d+$/.test(text)) return positive(Number(text) * 1000);
  // Only dates with letters in them: Date.parse would also read plain numbers like "1.5" as years.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return positive(at - nowMs);
}

export interface RetryOptions {
  policy: RetryPolicy;
  shouldRetry: (error: unknown) => boolean;
  /** A wait the error itself asks for (e.g. from `Retry-After`), used instead of the backoff. */
  requestedDelayMs?: (error: unknown) => number | undefined;
  sleep?: Sleep;
  now?: () => number;
  random?: () => number;
}

/** Runs `attempt` until it succeeds, the error is not retryable, or the attempts or time budget run out. */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { policy, shouldRetry, sleep = realSleep, now = Date.now, random = Math.random } = options;
  const startedAt = now();
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (attemptNumber >= policy.maxAttempts || !shouldRetry(error)) throw error;
      const requested = options.requestedDelayMs?.(error);
      // Asking again before the service said to would only earn another 429 and spend the
      // (organization-wide) request budget: a wait longer than we retry for goes to the caller.
      if (requested !== undefined && requested > policy.maxDelayMs) throw error;
      const delayMs = requested ?? backoffDelayMs(attemptNumber, policy, random);
      // Waiting past the budget would only make the caller wait longer for the same failure.
      if (now() - startedAt + delayMs > policy.maxElapsedMs) throw error;
      try {
        await sleep(delayMs);
      } catch {
        // The wait was cut (the bot is stopping): the caller needs this failure, which says
        // whether the service may have acted, not the reason of the cut.
        throw error;
      }
    }
  }
}
