import { Cron } from 'croner';

/**
 * Which days a digest covers. A period is the 7 full calendar days before the run's date in the
 * digest's time zone, sent to Mintlify as YYYY-MM-DD: `dateFrom` inclusive, `dateTo` exclusive.
 * Dates are counted as calendar days, never as 24-hour steps, so DST changes cannot shift them.
 */
export interface DigestPeriod {
  /** First day counted (YYYY-MM-DD). */
  dateFrom: string;
  /** The day after the last day counted (YYYY-MM-DD); the run's own date. */
  dateTo: string;
  timeZone: string;
}

export const PERIOD_DAYS = 7;

/** The calendar date of `at` in `timeZone`, as YYYY-MM-DD. */
export function localDate(at: Date, timeZone: string): string {
  // en-CA formats as YYYY-MM-DD; formatToParts keeps it independent of that detail.
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** YYYY-MM-DD plus `days` (negative to go back), across month and year ends. */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

/** The period a digest run at `runAt` covers. */
export function periodOfRun(runAt: Date, timeZone: string): DigestPeriod {
  const dateTo = localDate(runAt, timeZone);
  return { dateFrom: addDays(dateTo, -PERIOD_DAYS), dateTo, timeZone };
}

/**
 * Whether the period has ended in UTC too, which is most likely how Mintlify counts its days: until
 * then (a digest read early in a time zone east of UTC) its last day is still being counted, and
 * what was read is not final.
 */
export function periodEndedInUtc(period: Pick<DigestPeriod, 'dateTo'>, now: Date): boolean {
  return now.getTime() >= Date.parse(`${period.dateTo}T00:00:00Z`);
}

/** The 7 days before `period`: what week-over-week compares with. */
export function previousPeriod(period: DigestPeriod): DigestPeriod {
  return {
    dateFrom: addDays(period.dateFrom, -PERIOD_DAYS),
    dateTo: period.dateFrom,
    timeZone: period.timeZone,
  };
}

/** A stable name for the period, for store keys and logs. */
export function periodKey(period: Pick<DigestPeriod, 'dateFrom' | 'dateTo'>): string {
  return `${period.dateFrom}..${period.dateTo}`;
}

// Look back in growing windows: a per-second cron is found in the first, a yearly one in the last,
// and no window ever enumerates more than a few thousand runs.
const LOOK_BACK_MS = [60_000, 3_600_000, 86_400_000, 8 * 86_400_000, 32 * 86_400_000, 367 * 86_400_000];
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
