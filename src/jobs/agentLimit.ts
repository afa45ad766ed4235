import { RateLimitedError } from '../mintlify/index.js';
import type { JobsContext } from './jobsContext.js';

/**
 * Mintlify refused an agent use (a create, a follow-up) for its hourly limit: noted in the rate
 * ledger, so that the budget the bot shows (the Home tab, the next answers) says none is left,
 * whatever the bot's own count. It only informs: a note Redis could not take is let go.
 */
export async function noteIfLimitReached(ctx: JobsContext, projectId: string, error: unknown): Promise<void> {
  if (!(error instanceof RateLimitedError)) return;
  await ctx.ledger.refused(projectId, error.retryAfterMs).catch((noteError: unknown) => {
    ctx.logger.debug(`could not note Mintlify's limit for the budget: ${String(noteError)}`);
  });
}
