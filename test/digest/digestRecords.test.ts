import { afterEach, describe, expect, it, vi } from 'vitest';
import { DigestRecords } from '../../src/digest/digestRecords.js';
import { periodOfRun } from '../../src/digest/period.js';
import { previousScheduledRun } from '../../src/queue/cron.js';
import { openMemoryStore } from '../../src/store/store.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('the digest records', () => {
  it('keep a posted digest as long as the catch-up may find its run: a yearly one is not posted again', async () => {
    const yearly = '0 9 1 1 *';
    const postedAt = new Date('2026-01-01T09:05:00Z');
    vi.useFakeTimers({ toFake: ['Date'], now: postedAt });
    const store = openMemoryStore('digest-records');
    const records = new DigestRecords(store);
    const period = periodOfRun(new Date('2026-01-01T09:00:00Z'), 'UTC');
    await records.markPosted({
      ...period,
      channel: 'C0DIGEST',
      ts: '1767258300.000100',
      postedAt: postedAt.toISOString(),
    });

    // In June, and in late December, the latest run of the schedule is still 1 January's.
    for (const now of ['2026-06-01T12:00:00Z', '2026-12-31T12:00:00Z']) {
      vi.setSystemTime(new Date(now));
      const latest = previousScheduledRun(yearly, 'UTC', new Date(now)) as Date;
      expect(periodOfRun(latest, 'UTC')).toEqual(period);
      expect(await records.posted(period, 'C0DIGEST')).toMatchObject({ ts: '1767258300.000100' });
    }
    await store.close();
  });

  it('keep a digest posted on request for an hour: asked again after that, it is posted anew', async () => {
    const postedAt = new Date('2026-11-23T10:00:00Z');
    vi.useFakeTimers({ toFake: ['Date'], now: postedAt });
    const store = openMemoryStore('digest-records-asked');
    const records = new DigestRecords(store);
    const period = periodOfRun(postedAt, 'UTC');
    await records.markPostedOnRequest({
      ...period,
      channel: 'C0DOCS',
      ts: '1763892000.000100',
      postedAt: postedAt.toISOString(),
    });

    vi.setSystemTime(new Date('2026-11-23T10:59:00Z'));
    expect(await records.postedOnRequest(period, 'C0DOCS')).toMatchObject({ ts: '1763892000.000100' });
    expect(await records.postedOnRequest(period, 'C0OTHER')).toBeUndefined();
    vi.setSystemTime(new Date('2026-11-23T11:01:00Z'));
    expect(await records.postedOnRequest(period, 'C0DOCS')).toBeUndefined();
    await store.close();
  });
});
