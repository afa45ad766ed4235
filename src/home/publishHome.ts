import { Cron } from 'croner';
import type { JobsContext } from '../jobs/jobsContext.js';
import { homeView } from './homeView.js';

const RECENT_JOBS = 10;

/** Reads what a person's Home tab shows and publishes it for them. */
export async function publishHome(ctx: JobsContext, user: string): Promise<void> {
  const { config } = ctx;
  const [jobs, budget] = await Promise.all([
    ctx.records.recentForUser(user, RECENT_JOBS),
    // The budget is a nicety: the Home tab is still worth showing without it.
    ctx.ledger.current(config.mintlify.projectId).catch(() => undefined),
  ]);
  const { channel, cron, timezone } = config.digest;
  const view = homeView({
    jobs,
    budget,
    digest: { channel, nextAt: channel && cron ? nextRun(cron, timezone, ctx.now()) : undefined },
    now: ctx.now(),
  });
  await ctx.slack.views.publish({ user_id: user, view });
}

function nextRun(pattern: string, timezone: string, now: Date): Date | undefined {
  const cron = new Cron(pattern, { timezone, paused: true });
  try {
    return cron.nextRun(now) ?? undefined;
  } finally {
    cron.stop();
  }
}
