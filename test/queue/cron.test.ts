import { describe, expect, it } from 'vitest';
import { periodOfRun } from '../../src/digest/period.js';
import { nextCronRun, previousScheduledRun } from '../../src/queue/cron.js';

describe('the previous scheduled run (for catching up a missed digest)', () => {
  it('is the latest run at or before now, in the schedule’s time zone', () => {
    // Thursday 20 March 2025: the latest "Monday 09:00 Paris" was 17 March at 08:00 UTC.
    const run = previousScheduledRun('0 9 * * 1', 'Europe/Paris', new Date('2025-03-20T12:00:00Z'));
    expect(run?.toISOString()).toBe('2025-03-17T08:00:00.000Z');
  });

  it('counts the run that is due right now', () => {
    const run = previousScheduledRun('0 9 * * 1', 'UTC', new Date('2025-03-17T09:00:00Z'));
    expect(run?.toISOString()).toBe('2025-03-17T09:00:00.000Z');
  });

  it('finds the local hour across a DST change', () => {
    // Monday 31 March 2025 09:00 in Paris is 07:00 UTC (summer time began the day before).
    const run = previousScheduledRun('0 9 * * 1', 'Europe/Paris', new Date('2025-04-01T00:00:00Z'));
    expect(run?.toISOString()).toBe('2025-03-31T07:00:00.000Z');
    expect(periodOfRun(run as Date, 'Europe/Paris')).toMatchObject({
      dateFrom: '2025-03-24',
      dateTo: '2025-03-31',
    });
  });

  it('handles frequent and rare schedules alike', () => {
    const now = new Date('2025-03-20T12:00:07.500Z');
    expect(previousScheduledRun('* * * * * *', 'UTC', now)?.toISOString()).toBe('2025-03-20T12:00:07.000Z');
    expect(previousScheduledRun('0 9 1 * *', 'UTC', now)?.toISOString()).toBe('2025-03-01T09:00:00.000Z');
    expect(previousScheduledRun('0 9 1 1 *', 'UTC', now)?.toISOString()).toBe('2025-01-01T09:00:00.000Z');
  });

  it('looks back a year at most: a schedule that last fired longer ago has nothing to catch up', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    // 29 February: last in 2024, more than a year before.
    expect(previousScheduledRun('0 9 29 2 *', 'UTC', now)).toBeUndefined();
    expect(previousScheduledRun('0 9 24 11 *', 'UTC', now)?.toISOString()).toBe('2026-11-24T09:00:00.000Z');
    expect(previousScheduledRun('0 9 25 11 *', 'UTC', now)?.toISOString()).toBe('2025-11-25T09:00:00.000Z');
  });
});

describe('a digest time that a clock change skips or repeats (Europe/Paris)', () => {
  it('runs just after the gap when summer time begins, the same day', () => {
    // Sunday 30 March 2025: 02:00 became 03:00 at once, so 02:30 never came.
    const next = nextCronRun('30 2 * * 0', 'Europe/Paris', new Date('2025-03-29T12:00:00Z'));
    expect(next?.toISOString()).toBe('2025-03-30T01:00:00.000Z'); // 03:00 summer time
    expect(previousScheduledRun('30 2 * * 0', 'Europe/Paris', new Date('2025-03-30T12:00:00Z'))).toEqual(
      next,
    );
  });

  it('runs once when winter time comes back, at the first of the two', () => {
    // Sunday 26 October 2025: 02:30 came twice, at 00:30 and at 01:30 UTC.
    const next = nextCronRun('30 2 * * 0', 'Europe/Paris', new Date('2025-10-25T12:00:00Z'));
    expect(next?.toISOString()).toBe('2025-10-26T00:30:00.000Z');
    expect(nextCronRun('30 2 * * 0', 'Europe/Paris', next as Date)?.toISOString()).toBe(
      '2025-11-02T01:30:00.000Z',
    );
  });
});

describe('patterns that croner 9 read, and clock changes with more than one time a day', () => {
  it('still reads a step with a numeric start (1/7, 0/30), which croner 9 read and an existing DIGEST_CRON may use', () => {
    // croner 9.1.0 read `1/7` in the day of the month as 1, 8, 15, 22, 29.
    expect(nextCronRun('0 9 1/7 * *', 'UTC', new Date('2026-11-24T00:00:00Z'))?.toISOString()).toBe(
      '2026-11-29T09:00:00.000Z',
    );
    // And `0/30` in the minutes as 0 and 30.
    expect(nextCronRun('0/30 9 * * *', 'UTC', new Date('2026-11-24T09:00:00Z'))?.toISOString()).toBe(
      '2026-11-24T09:30:00.000Z',
    );
  });

  it('runs a time the clock skips just after the gap, also when the hour or minute lists more than one value', () => {
    // Sunday 30 March 2025 in Paris: 02:00 became 03:00; both 02:00 and 02:30 run at 03:00, once.
    const next = nextCronRun('0,30 2 * * 0', 'Europe/Paris', new Date('2025-03-29T12:00:00Z'));
    expect(next?.toISOString()).toBe('2025-03-30T01:00:00.000Z');
    expect(nextCronRun('0,30 2 * * 0', 'Europe/Paris', next as Date)?.toISOString()).toBe(
      '2025-04-06T00:00:00.000Z',
    );
  });

  it('runs a repeated time once, also when the hour lists more than one value', () => {
    // Sunday 26 October 2025 in Paris: 02:30 came at 00:30 and at 01:30 UTC.
    const first = nextCronRun('30 2,14 * * 0', 'Europe/Paris', new Date('2025-10-26T00:00:00Z')) as Date;
    expect(first.toISOString()).toBe('2025-10-26T00:30:00.000Z');
    expect(nextCronRun('30 2,14 * * 0', 'Europe/Paris', first)?.toISOString()).toBe(
      '2025-10-26T13:30:00.000Z',
    );
  });
});
