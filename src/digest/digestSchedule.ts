import { Cron } from 'croner';
import type { DigestContext } from './digestContext.js';
import { type DigestPeriod, periodKey, periodOfRun, previousScheduledRun } from './period.js';
import { type DigestOutcome, postScheduledDigest } from './postDigest.js';

/**
 * The weekly digest on DIGEST_CRON in DIGEST_TIMEZONE, posted to DIGEST_CHANNEL. Every instance
 * runs the schedule; the lease and the posted record in the store make one of them post.
 * At start it catches up: when the latest scheduled run has no posted record (the bot was down
 * then), that run's digest is posted now. Older missed runs are not: only the latest period is news.
 */
export interface DigestSchedule {
  start(): void;
  /** Stops the schedule and waits for a run in progress (the context's shutdown signal cuts its waits). */
  stop(): Promise<void>;
}

/** Undefined when DIGEST_CHANNEL is not set: no digest is scheduled. */
export function digestSchedule(ctx: DigestContext): DigestSchedule | undefined {
  const { channel, cron: pattern, timezone } = ctx.config.digest;
  if (!channel) return undefined;
  const running = new Set<Promise<void>>();
  let cron: Cron | undefined;

  const run = (period: DigestPeriod, why: 'scheduled' | 'catch-up') => {
    const work = postScheduledDigest(ctx, period, channel).then(
      (outcome) => report(ctx, outcome, why),
      (error: unknown) =>
        ctx.logger.error(
          `the ${why} digest for ${periodKey(period)} in ${channel} failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
    running.add(work);
    void work.finally(() => running.delete(work));
    return work;
  };

  return {
    start() {
      if (cron) return;
      const now = ctx.now();
      // protect: a run still waiting out the rate limit is not joined by the next one.
      cron = new Cron(pattern, { timezone, protect: true }, () =>
        run(periodOfRun(ctx.now(), timezone), 'scheduled'),
      );
      const missed = previousScheduledRun(pattern, timezone, now);
      if (missed) void run(periodOfRun(missed, timezone), 'catch-up');
      ctx.logger.info(
        `weekly digest scheduled "${pattern}" (${timezone}) to ${channel}; next at ${cron.nextRun()?.toISOString() ?? 'never'}`,
      );
    },
    async stop() {
      cron?.stop();
      await Promise.allSettled([...running]);
    },
  };
}

function report(ctx: DigestContext, outcome: DigestOutcome, why: 'scheduled' | 'catch-up'): void {
  const what = `${why} digest for ${periodKey(outcome.period)}`;
  switch (outcome.kind) {
    case 'posted':
      if (why === 'catch-up') ctx.logger.info(`posted the ${what}, missed while the bot was down`);
      return;
    case 'already_posted':
      ctx.logger.info(`${what}: already posted (ts ${outcome.record.ts})`);
      return;
    case 'in_progress':
      ctx.logger.info(`${what}: another instance is posting it`);
      return;
    case 'failed':
      return; // logged where it failed, once
  }
}
