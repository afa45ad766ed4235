import { LONGEST_LOOK_BACK_MS } from '../queue/cron.js';
import type { Store } from '../store/store.js';
import type { PeriodDates, ReadProgress, SiteTotals, VisitorNumbers } from './collectVisitors.js';
import { periodKey } from './period.js';
import type { Struggles } from './struggles.js';

/**
 * What the store remembers about digests, shared by every instance and kept across restarts:
 * the numbers of each period that was posted (week-over-week compares with them), and which
 * (period, channel) pairs already got their scheduled digest (so it is posted once).
 */

export interface PostedDigest {
  channel: string;
  dateFrom: string;
  dateTo: string;
  /** The message's ts in the channel. */
  ts: string;
  postedAt: string;
}

/** `collectedAt`: when the read began. */
export type StoredNumbers = VisitorNumbers & { collectedAt: string };

/** A read's progress, with the size of its ranking (DIGEST_TOP) and when the read began. */
export type StoredProgress = ReadProgress & { size: number; collectedAt: string };

// Week-over-week only needs last week's, and catch-up the latest period's; a quarter leaves room
// for monthly schedules and for a bot stopped for a while.
const KEEP_MS = 92 * 86_400_000;
// As long as the catch-up looks back for a missed run (a yearly schedule's is up to a year old),
// and a week more: a digest posted is never taken for one missed.
const POSTED_KEEP_MS = LONGEST_LOOK_BACK_MS + 7 * 86_400_000;

// Not under `digest:`, which is the BullMQ digest queue's prefix.
const numbersKey = (period: PeriodDates) => `digest-numbers:${periodKey(period)}`;
const strugglesKey = (period: PeriodDates) => `digest-struggles:${periodKey(period)}`;
const postedKey = (period: PeriodDates, channel: string) => `digest-posted:${channel}:${periodKey(period)}`;
const totalsKey = (period: PeriodDates) => `digest-totals:${periodKey(period)}`;
const progressKey = (period: PeriodDates) => `digest-progress:${periodKey(period)}`;
const failedKey = (period: PeriodDates, channel: string) => `digest-failed:${channel}:${periodKey(period)}`;
const askedKey = (period: PeriodDates, channel: string) => `digest-asked:${channel}:${periodKey(period)}`;
const lastPostedKey = (channel: string) => `digest-last-posted:${channel}`;

/** How long a digest posted on request stands for the next request in its channel. */
export const ASKED_KEEP_MS = 3_600_000;
/** A read given up (the analytics limit) is tried again within hours: its progress waits a day. */
const PROGRESS_KEEP_MS = 86_400_000;

export class DigestRecords {
  constructor(private readonly store: Store) {}

  numbers(period: PeriodDates): Promise<StoredNumbers | undefined> {
    return this.store.kv.get<StoredNumbers>(numbersKey(period));
  }

  async saveNumbers(numbers: VisitorNumbers, at: Date): Promise<void> {
    await this.store.kv.set(
      numbersKey(numbers.period),
      { ...numbers, collectedAt: at.toISOString() },
      KEEP_MS,
    );
  }

  /** How far the last read of the period's visitors got, when it did not finish (see `ReadProgress`). */
  progress(period: PeriodDates): Promise<StoredProgress | undefined> {
    return this.store.kv.get<StoredProgress>(progressKey(period));
  }

  async saveProgress(period: PeriodDates, progress: StoredProgress): Promise<void> {
    await this.store.kv.set(progressKey(period), progress, PROGRESS_KEEP_MS);
  }

  async dropProgress(period: PeriodDates): Promise<void> {
    await this.store.kv.delete(progressKey(period));
  }

  /** What readers struggled with in the period, as read in full once. */
  struggles(period: PeriodDates): Promise<Struggles | undefined> {
    return this.store.kv.get<Struggles>(strugglesKey(period));
  }

  async saveStruggles(period: PeriodDates, struggles: Struggles): Promise<void> {
    await this.store.kv.set(strugglesKey(period), struggles, KEEP_MS);
  }

  /** A period's site totals alone, read for the comparison with the week after it. */
  totals(period: PeriodDates): Promise<SiteTotals | undefined> {
    return this.store.kv.get<SiteTotals>(totalsKey(period));
  }

  async saveTotals(period: PeriodDates, totals: SiteTotals): Promise<void> {
    await this.store.kv.set(totalsKey(period), totals, KEEP_MS);
  }

  posted(period: PeriodDates, channel: string): Promise<PostedDigest | undefined> {
    return this.store.kv.get<PostedDigest>(postedKey(period, channel));
  }

  /** A digest of the period posted on request (`/docs-agent digest`) in the channel within the hour. */
  postedOnRequest(period: PeriodDates, channel: string): Promise<PostedDigest | undefined> {
    return this.store.kv.get<PostedDigest>(askedKey(period, channel));
  }

  async markPostedOnRequest(record: PostedDigest): Promise<void> {
    await this.store.kv.set(askedKey(record, record.channel), record, ASKED_KEEP_MS);
  }

  async markPosted(record: PostedDigest): Promise<void> {
    await this.store.kv.set(postedKey(record, record.channel), record, POSTED_KEEP_MS);
    // Written again for an older record (its life lengthened), it does not go back in time.
    const last = await this.lastPosted(record.channel);
    if (last === undefined || last < record.postedAt) {
      await this.store.kv.set(lastPostedKey(record.channel), record.postedAt, POSTED_KEEP_MS);
    }
  }

  /** When the channel last got a scheduled digest (ISO time), of whichever period. */
  lastPosted(channel: string): Promise<string | undefined> {
    return this.store.kv.get<string>(lastPostedKey(channel));
  }

  /** A try of the period's digest failed: for `forMs`, no catch-up of it is queued (see digestSchedule.ts). */
  async markFailed(period: PeriodDates, channel: string, at: Date, forMs: number): Promise<void> {
    if (forMs > 0) await this.store.kv.set(failedKey(period, channel), at.toISOString(), forMs);
  }

  async failedRecently(period: PeriodDates, channel: string): Promise<boolean> {
    return (await this.store.kv.get<string>(failedKey(period, channel))) !== undefined;
  }
}
