import type { Logger } from '@slack/bolt';
import { classifySlackError } from '../slack/slackErrors.js';

/** How long a publish waits for the person's one before it (a slow one is then not waited for). */
const PREVIOUS_WAIT_MS = 5_000;
/** "A few seconds": a burst of job changes gives one refresh now and one at the end of the burst. */
const MIN_INTERVAL_MS = 3_000;

export interface HomeRefresherOptions {
  /** `refresh`: one of the person's jobs changed (else they opened the tab, which is always published). */
  publish: (user: string, refresh: boolean) => Promise<void>;
  logger: Logger;
  minIntervalMs?: number;
  /** Tests shorten how long a publish waits for the one before it. */
  previousWaitMs?: number;
  /** Wraps each publish, so shutdown can wait for those already running. */
  track?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** A person's publish: running (started) or waiting for the one before it. */
interface Publish {
  /** Asked for by job changes alone: it may be skipped when it would show what the tab shows. */
  refresh: boolean;
  started: boolean;
  /** Slack took it. */
  landed: boolean;
  /** The newer publish that stopped waiting for this one: if that lands first, this one lands last. */
  overtakenBy: Publish | undefined;
  done: Promise<void>;
}

/**
 * Keeps each person's Home tab current: published when they open it, and refreshed when one of
 * their jobs changes, at most once every few seconds per person (in this instance; a second
 * instance may refresh too, which only costs a call: `publishHome` keeps the newer of two).
 */
export class HomeRefresher {
  private readonly lastRefresh = new Map<string, number>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Each person's latest publish, running or waiting for the one before it. */
  private readonly publishes = new Map<string, Publish>();
  private readonly minIntervalMs: number;
  private readonly previousWaitMs: number;
  private stopped = false;

  constructor(private readonly options: HomeRefresherOptions) {
    this.minIntervalMs = options.minIntervalMs ?? MIN_INTERVAL_MS;
    this.previousWaitMs = options.previousWaitMs ?? PREVIOUS_WAIT_MS;
  }

  /** The person opened the Home tab: publish now. */
  publishNow(user: string): Promise<void> {
    return this.run(user, false);
  }

  /** One of the person's jobs changed: refresh now, or once the interval since the last refresh is up. */
  refresh(user: string): void {
    if (this.stopped || this.pending.has(user)) return;
    const wait = (this.lastRefresh.get(user) ?? -Infinity) + this.minIntervalMs - Date.now();
    if (wait <= 0) return this.refreshNow(user);
    const timer = setTimeout(() => {
      this.pending.delete(user);
      this.refreshNow(user);
    }, wait);
    timer.unref();
    this.pending.set(user, timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private refreshNow(user: string): void {
    if (this.stopped) return;
    const now = Date.now();
    // Forget people whose interval is over, so the map stays as small as the recent activity.
    for (const [someone, at] of this.lastRefresh)
      if (now - at >= this.minIntervalMs) this.lastRefresh.delete(someone);
    this.lastRefresh.set(user, now);
    void this.run(user, true);
  }

  /** Whether `done` settled within `ms`. */
  private async atMost(done: Promise<void>, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
      timer.unref();
    });
    try {
      return await Promise.race([done.then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One publish at a time per person, in order, so a slow one (Slack's retries) does not land after
   * a newer one. A publish still waiting its turn reads the newest state when it starts, so a third
   * asked meanwhile joins it. One stuck in retries holds the next back a few seconds at most; if it
   * then lands after all, showing older state, one more publish puts the newest back on top.
   */
  private run(user: string, refresh: boolean): Promise<void> {
    const tail = this.publishes.get(user);
    // Joined by a refresh, it publishes as it was asked; joined by an opening, as asked by it.
    if (tail && !tail.started) {
      if (!refresh) tail.refresh = false;
      return tail.done;
    }
    const publish: Publish = {
      refresh,
      started: false,
      landed: false,
      overtakenBy: undefined,
      done: Promise.resolve(),
    };
    const work = async () => {
      if (tail && !(await this.atMost(tail.done, this.previousWaitMs))) tail.overtakenBy = publish;
      publish.started = true;
      try {
        await this.options.publish(user, publish.refresh);
        publish.landed = true;
      } catch (error) {
        // A refused token is said once for every call (SlackTokenState), not per person.
        if (classifySlackError(error) !== 'auth')
          this.options.logger.warn(`could not publish the Home tab of ${user}: ${String(error)}`);
      } finally {
        if (this.publishes.get(user) === publish) this.publishes.delete(user);
      }
      // It landed after the newer one, with older state: once more, not waited for (so a run of
      // slow publishes is no chain).
      if (publish.landed && publish.overtakenBy?.landed && !this.stopped) void this.run(user, false);
    };
    publish.done = this.options.track ? this.options.track(work) : work();
    this.publishes.set(user, publish);
    return publish.done;
  }
}
