import { retryInBackground } from '../store/retryInBackground.js';
import { isStoreUnavailable } from '../store/storeErrors.js';
import type { JobsContext } from './jobsContext.js';

/**
 * A job's write that Redis did not take (a follow-up's answer, its first check, its card moved to a
 * DM), tried again in the background every few seconds until Redis takes it. `undone` says why it
 * never was: Redis away for `forMs`, another error, or the bot stopping first.
 */
export function againOnceRedisAnswers(
  ctx: JobsContext,
  write: () => Promise<void>,
  options: { forMs: number; undone: (why: string) => void },
): void {
  const undone = (why: string) => {
    options.undone(why);
    return false;
  };
  retryInBackground(
    async () => {
      await write();
      return true;
    },
    {
      everyMs: ctx.starts.recordAgainEveryMs,
      forMs: options.forMs,
      wanted: () => !ctx.stopping.aborted || undone('the bot is stopping'),
      retryOn: isStoreUnavailable,
      giveUp: undone,
    },
  );
}
