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

const PERIOD_DAYS = 7;

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
