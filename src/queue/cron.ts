import { Cron } from 'croner';

/**
 * Cron patterns are read by croner alone: the configuration's check, the catch-up of a missed run,
 * the schedule without Redis, and the schedule on Redis (BullMQ's `repeatStrategy`, which otherwise
 * reads patterns with cron-parser). The two readers differ on some patterns (`5#L`, `5L`, a step in
 * the day of the week, a time a clock change skips or repeats): with both, a digest could be due
 * by one and not by the other, and be posted twice, late or never.
 */

/** The first run of `pattern` in `timeZone` strictly after `after`; undefined when there is none. */
export function nextCronRun(pattern: string, timeZone: string | undefined, after: Date): Date | undefined {
  const cron = new Cron(pattern, { ...(timeZone ? { timezone: timeZone } : {}), paused: true });
  try {
    return cron.nextRun(after) ?? undefined;
  } finally {
    cron.stop();
  }
}

// Look back in growing windows: a per-second cron is found in the first, a yearly one in the last,
// and no window ever enumerates more than a few thousand runs.
/** The furthest back `previousScheduledRun` looks. */
export const LONGEST_LOOK_BACK_MS = 367 * 86_400_000;
const LOOK_BACK_MS = [60_000, 3_600_000, 86_400_000, 8 * 86_400_000, 32 * 86_400_000, LONGEST_LOOK_BACK_MS];
const MAX_RUNS_PER_WINDOW = 10_000;

/**
 * The latest time at or before `now` when `pattern` fired (or should have) in `timeZone`;
 * undefined when it never did within a year. Croner only counts forward, so this walks
 * forward from a point in the past.
 */
export function previousScheduledRun(pattern: string, timeZone: string, now: Date): Date | undefined {
  const cron = new Cron(pattern, { timezone: timeZone, paused: true });
  try {
    for (const windowMs of LOOK_BACK_MS) {
      let latest: Date | undefined;
      // nextRun() is strictly after its argument: start 1 s earlier so a run exactly at the edge counts.
      let run = cron.nextRun(new Date(now.getTime() - windowMs - 1_000));
      for (let i = 0; run && run.getTime() <= now.getTime() && i < MAX_RUNS_PER_WINDOW; i++) {
        latest = run;
        run = cron.nextRun(run);
      }
      if (latest) return latest;
    }
    return undefined;
  } finally {
    cron.stop();
  }
}
