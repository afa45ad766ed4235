import { describe, expect, it } from 'vitest';
import {
  addDays,
  localDate,
  periodEndedInUtc,
  periodOfRun,
  previousPeriod,
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

it('counts a period as read in full from midnight UTC of its end date on, not a moment before', () => {
  const period = { dateTo: '2025-03-17' };
  expect(periodEndedInUtc(period, new Date('2025-03-16T23:59:59.999Z'))).toBe(false);
  expect(periodEndedInUtc(period, new Date('2025-03-17T00:00:00.000Z'))).toBe(true);
});
