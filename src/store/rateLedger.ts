import type { AtomicOps, WindowCount } from './atomic.js';

/** Mintlify allows 100 agent uses (creates and follow-ups) per project per hour. */
export const AGENT_USES_PER_HOUR = 100;
const HOUR_MS = 3_600_000;

export interface AgentBudget {
  used: number;
  remaining: number;
  /** When the oldest use in the window leaves it, freeing one use; undefined when none are used. */
  nextFreeAt: Date | undefined;
}

/**
 * A rolling count of agent uses per project, shared by every instance through the store.
 * It only informs users ("3 uses left this hour"); Mintlify's 429 stays the authority.
 */
export class RateLedger {
  constructor(
    private readonly atomic: AtomicOps,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one use, named by `useId` (the job created, the follow-up sent): counted again under the
   * same name, as when a write that timed out had landed after all, it is still one use.
   */
  async recordUse(projectId: string, useId: string): Promise<AgentBudget> {
    return budget(await this.atomic.windowHit(key(projectId), this.now(), HOUR_MS, useId));
  }

  async current(projectId: string): Promise<AgentBudget> {
    return budget(await this.atomic.windowHits(key(projectId), this.now(), HOUR_MS));
  }
}

const key = (projectId: string) => `agent-uses:${projectId}`;

function budget({ count, oldestMs }: WindowCount): AgentBudget {
  return {
    used: count,
    remaining: Math.max(0, AGENT_USES_PER_HOUR - count),
    nextFreeAt: oldestMs === undefined ? undefined : new Date(oldestMs + HOUR_MS),
  };
}
