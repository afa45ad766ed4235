import { describe, expect, it } from 'vitest';
import {
  addDays,
  localDate,
  periodOfRun,
  previousPeriod,
  previousScheduledRun,
} from '../../src/digest/period.js';

describe('the period a digest covers', () => {
  it('is the 7 full days before the run’s date: dateFrom inclusive, dateTo exclusive', () => {
    expect(periodOfRun(new Date('2025-03-17T09:00:00Z'), 'UTC')).toEqual({
      dateFrom: '2025-03-10',
      dateTo: '2025-03-17',
      timeZone: 'UTC',
    });
  });

  it('crosses month ends, leap days and year ends', () => {
    expect(periodOfRun(new Date('2025-03-03T09:00:00Z'), 'UTC')).toMatchObject({
      dateFrom: '2025-02-24',
      dateTo: '2025-03-03',
    });
    expect(periodOfRun(new Date('2024-03-04T09:00:00Z'), 'UTC')).toMatchObject({
      dateFrom: '2024-02-26',
      dateTo: '2024-03-04',
    });
    expect(periodOfRun(new Date('2026-01-05T09:00:00Z'), 'UTC')).toMatchObject({
      dateFrom: '2025-12-29',
      dateTo: '2026-01-05',
    });
  });

  it('takes the run’s date in the digest’s time zone, not in UTC', () => {
    // Monday 00:30 in Auckland is still Sunday in UTC.
    const run = new Date('2025-06-08T12:30:00Z');
    expect(localDate(run, 'Pacific/Auckland')).toBe('2025-06-09');
    expect(periodOfRun(run, 'Pacific/Auckland')).toMatchObject({
      dateFrom: '2025-06-02',
      dateTo: '2025-06-09',
    });
    // Monday 01:00 in UTC is still Sunday evening in New York.
    expect(periodOfRun(new Date('2025-06-09T01:00:00Z'), 'America/New_York')).toMatchObject({
      dateFrom: '2025-06-01',
      dateTo: '2025-06-08',
    });
  });

  it('keeps whole calendar days across DST changes in a non-UTC zone', () => {
    // Europe/Paris springs forward on 30 March 2025 and falls back on 26 October 2025.
    expect(periodOfRun(new Date('2025-03-31T07:00:00Z'), 'Europe/Paris')).toMatchObject({
      dateFrom: '2025-03-24',
      dateTo: '2025-03-31',
    });
    expect(periodOfRun(new Date('2025-10-27T08:00:00Z'), 'Europe/Paris')).toMatchObject({
      dateFrom: '2025-10-20',
      dateTo: '2025-10-27',
    });
    // Just after midnight local time on the night of the change.
    expect(periodOfRun(new Date('2025-03-29T23:30:00Z'), 'Europe/Paris')).toMatchObject({
      dateTo: '2025-03-30',
    });
  });

  it('compares with the 7 days just before it', () => {
    expect(previousPeriod({ dateFrom: '2025-03-03', dateTo: '2025-03-10', timeZone: 'UTC' })).toEqual({
      dateFrom: '2025-02-24',
      dateTo: '2025-03-03',
      timeZone: 'UTC',
    });
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
  });
});

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
});
