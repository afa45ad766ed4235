import { describe, expect, it } from 'vitest';
import { periodOfRun } from '../../src/digest/period.js';
import { previousScheduledRun } from '../../src/queue/cron.js';

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
