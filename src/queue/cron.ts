import { Cron, type CronOptions } from 'croner';

/**
 * Cron patterns are read by croner alone: the configuration's check, the catch-up of a missed run,
 * the schedule without Redis, and the schedule on Redis (BullMQ's `repeatStrategy`, which otherwise
 * reads patterns with cron-parser). The two readers differ on some patterns (`5#L`, a time a clock
 * change skips or repeats, among others): with both, a digest could be due by one and not by the
 * other, and be posted twice, late or never.
 */

/**
 * How every reader here asks croner to read a pattern:
 * - a step with a number before it (`1/7`: from 1, every 7) is read as croner 9 and cron-parser read
 *   it, not refused: a DIGEST_CRON that worked before keeps working;
 * - a time of fixed minutes and hours (`30 2`, `0,30 2`, `30 2,14`) that the clock skips when summer
 *   time begins runs just after the gap, and one it repeats runs once, as Vixie cron does. A pattern
 *   with `*` or a step in them (every 30 minutes) runs at every time the clock shows.
 */
export function cronOptions(timeZone: string | undefined): CronOptions {
  return { ...(timeZone ? { timezone: timeZone } : {}), sloppyRanges: true, fixedTimeRule: 'no-wildcard' };
}

/** The first run of `pattern` in `timeZone` strictly after `after`; undefined when there is none. */
export function nextCronRun(pattern: string, timeZone: string | undefined, after: Date): Date | undefined {
  const cron = new Cron(pattern, { ...cronOptions(timeZone), paused: true });
  try {
    return cron.nextRun(after) ?? undefined;
  } finally {
    cron.stop();
  }
}

/**
 * The furthest back `previousScheduledRun` looks: a posted digest's record outlives it, so the
 * catch-up of a run found this far back can still tell whether it was posted.
 */
export const LONGEST_LOOK_BACK_MS = 367 * 86_400_000;

/**
 * The latest time at or before `now` when `pattern` fired (or should have) in `timeZone`;
 * undefined when it never did within a year.
 */
export function previousScheduledRun(pattern: string, timeZone: string, now: Date): Date | undefined {
  const cron = new Cron(pattern, { ...cronOptions(timeZone), paused: true });
  try {
    // croner counts runs strictly before its reference, and a run earlier in the same second: a
    // millisecond later, a run due exactly now counts.
    const [latest] = cron.previousRuns(1, new Date(now.getTime() + 1));
    return latest && now.getTime() - latest.getTime() <= LONGEST_LOOK_BACK_MS ? latest : undefined;
  } finally {
    cron.stop();
  }
}
