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
  let settled = false;
  const settle = (why?: string) => {
    if (settled) return false;
    settled = true;
    ctx.stopping.removeEventListener('abort', onStop);
    if (why !== undefined) options.undone(why);
    return false;
  };
  // Said as the bot stops, not at a try that never comes: the process exits soon after.
  const onStop = () => settle('the bot is stopping');
  if (ctx.stopping.aborted) return void onStop();
  ctx.stopping.addEventListener('abort', onStop, { once: true });
  retryInBackground(
    async () => {
      await write();
      settle();
      return true;
    },
    {
      everyMs: ctx.starts.recordAgainEveryMs,
      forMs: options.forMs,
      wanted: () => !settled && !ctx.stopping.aborted,
      retryOn: isStoreUnavailable,
      giveUp: (why) => settle(why),
    },
  );
}
