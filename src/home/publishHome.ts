import type { types } from '@slack/bolt';
import { personRefusal } from '../jobs/access.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { nextCronRun } from '../queue/cron.js';
import { slackErrorCode } from '../slack/slackErrors.js';
import { homeView, refusedHomeView } from './homeView.js';

type View = types.HomeView;

const RECENT_JOBS = 10;
/** How long the hash of a person's last published Home tab is kept (a quiet person's is read again). */
const HOME_HASH_MS = 30 * 24 * 3_600_000;
/** Tries of a publish that another process's publish overtook; the last goes without a hash. */
const PUBLISH_TRIES = 3;
/** The people whose last published tab this process remembers, at most. */
const SHOWN_KEPT = 1_000;

/**
 * What this process last published on each person's tab (all but its "Updated" line), and the hash
 * Slack gave it: a refresh that would show the same, with no publish since, is not sent.
 */
export type ShownHomes = Map<string, { content: string; hash: string }>;

/**
 * Reads what a person's Home tab shows and publishes it for them. Several processes may publish one
 * person's tab at once (one took app_home_opened, another saw a job finish): each publish carries
 * the hash of the tab as it was before this one read the jobs, so one that reads older state and
 * lands after a newer one is refused by Slack (`hash_conflict`), and reads again.
 */
export async function publishHome(ctx: JobsContext, user: string, shown?: ShownHomes): Promise<void> {
  const key = `home-hash:${user}`;
  for (let tries = 1; ; tries += 1) {
    // Read before the jobs: whatever is published after this read carries state as new as ours.
    const hash =
      tries < PUBLISH_TRIES ? await ctx.store.kv.get<string>(key).catch(() => undefined) : undefined;
    const view = await homeViewOf(ctx, user);
    const content = JSON.stringify(view.blocks.slice(0, -1));
    const last = shown?.get(user);
    // Not after a hash_conflict: that proves the tab is no longer what this process published.
    if (tries === 1 && hash !== undefined && last?.hash === hash && last.content === content) return;
    try {
      const published = await ctx.slack.views.publish({ user_id: user, view, ...(hash ? { hash } : {}) });
      // Not kept (Redis away, or two publishes storing out of order): the next publish may be refused
      // once, and goes without a hash on its last try.
      if (published.view?.hash) {
        await ctx.store.kv.set(key, published.view.hash, HOME_HASH_MS).catch(() => undefined);
        remember(shown, user, { content, hash: published.view.hash });
      }
      return;
    } catch (error) {
      if (slackErrorCode(error) !== 'hash_conflict' || tries >= PUBLISH_TRIES) throw error;
    }
  }
}

function remember(shown: ShownHomes | undefined, user: string, tab: { content: string; hash: string }) {
  if (!shown) return;
  shown.delete(user); // the newest last
  shown.set(user, tab);
  if (shown.size > SHOWN_KEPT) shown.delete(shown.keys().next().value!);
}

async function homeViewOf(ctx: JobsContext, user: string): Promise<View> {
  const { config } = ctx;
  // Someone ALLOWED_USER_IDS leaves out is told so, not shown doors that would each refuse them.
  const refusal = personRefusal(config.access, user);
  if (refusal) return refusedHomeView(refusal);
  const [jobs, budget] = await Promise.all([
    ctx.records.recentForUser(user, RECENT_JOBS),
    // The budget is a nicety: the Home tab is still worth showing without it.
    ctx.ledger.current(config.mintlify.projectId).catch(() => undefined),
  ]);
  const { channel, cron, timezone } = config.digest;
  return homeView({
    jobs,
    budget,
    digest: { channel, nextAt: channel && cron ? nextCronRun(cron, timezone, ctx.now()) : undefined },
    now: ctx.now(),
  });
}
