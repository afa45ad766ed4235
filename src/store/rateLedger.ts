import type Keyv from 'keyv';
import type { AtomicOps, WindowCount } from './atomic.js';

/** Mintlify allows 100 agent uses (creates and follow-ups) per project per hour. */
export const AGENT_USES_PER_HOUR = 100;
const HOUR_MS = 3_600_000;
/**
 * How long a 429 that said nothing of when to come back counts the hour as spent. Mintlify's window
 * rolls, so uses free up one by one: a little while, not the hour.
 */
const UNSAID_REFUSAL_MS = 5 * 60_000;

export interface AgentBudget {
  used: number;
  remaining: number;
  /**
   * When a use leaves the window, freeing one: the oldest, or while more than the limit are counted
   * (a use counted late), the one whose leaving brings the count below it. Undefined when none are used.
   */
  nextFreeAt: Date | undefined;
}

/** Mintlify's last refusal for the limit: when it came, until when it holds, and whether Mintlify said so. */
interface Refusal {
  at?: number;
  until: number;
  said: boolean;
}

/**
 * A rolling count of agent uses per project, shared by every instance through the store.
 * It only informs users ("3 uses left this hour"); Mintlify's 429 stays the authority: uses made
 * elsewhere (another integration, the dashboard) count in its hour too, so once it refused one,
 * none is said to be left until it said to come back (or a few minutes).
 */
export class RateLedger {
  constructor(
    private readonly store: { atomic: AtomicOps; kv: Keyv },
    private readonly now: () => number = Date.now,
  ) {}

  /** Mintlify refused a use for its limit (a 429), saying when to come back or not. */
  async refused(projectId: string, retryAfterMs: number | undefined): Promise<void> {
    const forMs = retryAfterMs ?? UNSAID_REFUSAL_MS;
    const at = this.now();
    const refusal: Refusal = { at, until: at + forMs, said: retryAfterMs !== undefined };
    await this.store.kv.set(refusalKey(projectId), refusal, forMs);
  }

  /**
   * Counts one use, named by `useId` (the job created, the follow-up sent), at `sentAt` (when its
   * request went out; now if not known): counted again under the same name, as when a write that
   * timed out had landed after all, it is still one use.
   */
  async recordUse(projectId: string, useId: string, sentAt?: number): Promise<AgentBudget> {
    const at = sentAt ?? this.now();
    const [uses, refusal] = await Promise.all([
      this.store.atomic.windowHit(key(projectId), at, HOUR_MS, useId, AGENT_USES_PER_HOUR),
      this.lastRefusal(projectId),
    ]);
    // Mintlify took a use sent after it refused one: its limit no longer holds, whatever it said.
    // A use sent before the refusal (its answer slow to come) says nothing of the hour after it.
    if (refusal && (refusal.at ?? 0) > at) return budget(uses, refusal);
    if (refusal) await this.store.kv.delete(refusalKey(projectId));
    return budget(uses, undefined);
  }

  async current(projectId: string): Promise<AgentBudget> {
    const [uses, refusal] = await Promise.all([
      this.store.atomic.windowHits(key(projectId), this.now(), HOUR_MS, AGENT_USES_PER_HOUR),
      this.lastRefusal(projectId),
    ]);
    return budget(uses, refusal);
  }

  private async lastRefusal(projectId: string): Promise<Refusal | undefined> {
    const refusal = await this.store.kv.get<Refusal>(refusalKey(projectId));
    return refusal && refusal.until > this.now() ? refusal : undefined;
  }
}

const key = (projectId: string) => `agent-uses:${projectId}`;
const refusalKey = (projectId: string) => `agent-limit-reached:${projectId}`;

function budget({ count, oldestMs, limitLeavesMs }: WindowCount, refusal: Refusal | undefined): AgentBudget {
  // While the limit is reached, the oldest leaving frees nothing if more than the limit are counted.
  const freeingMs = limitLeavesMs ?? oldestMs;
  const oneFrees = freeingMs === undefined ? undefined : new Date(freeingMs + HOUR_MS);
  if (refusal) {
    return {
      used: count,
      remaining: 0,
      nextFreeAt: refusal.said ? new Date(refusal.until) : oneFrees,
    };
  }
  return { used: count, remaining: Math.max(0, AGENT_USES_PER_HOUR - count), nextFreeAt: oneFrees };
}
