import { personRefusal } from '../jobs/access.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { nextCronRun } from '../queue/cron.js';
import { homeView, refusedHomeView } from './homeView.js';

const RECENT_JOBS = 10;

/** Reads what a person's Home tab shows and publishes it for them. */
export async function publishHome(ctx: JobsContext, user: string): Promise<void> {
  const { config } = ctx;
  // Someone ALLOWED_USER_IDS leaves out is told so, not shown doors that would each refuse them.
  const refusal = personRefusal(config.access, user);
  if (refusal) {
    await ctx.slack.views.publish({ user_id: user, view: refusedHomeView(refusal) });
    return;
  }
  const [jobs, budget] = await Promise.all([
    ctx.records.recentForUser(user, RECENT_JOBS),
    // The budget is a nicety: the Home tab is still worth showing without it.
    ctx.ledger.current(config.mintlify.projectId).catch(() => undefined),
  ]);
  const { channel, cron, timezone } = config.digest;
  const view = homeView({
    jobs,
    budget,
    digest: { channel, nextAt: channel && cron ? nextCronRun(cron, timezone, ctx.now()) : undefined },
    now: ctx.now(),
  });
  await ctx.slack.views.publish({ user_id: user, view });
}
