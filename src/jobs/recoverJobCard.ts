import { findPostedMessage } from '../slack/postedMessages.js';
import {
  cardRefusalReason,
  isPassingSlackFailure,
  postingNotAllowed,
  surelyNotDone,
} from '../slack/slackErrors.js';
import { withRenewedLease } from '../store/lease.js';
import { followInDm } from './followInDm.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { START_LEASE_MS, startLeaseName } from './jobStarts.js';
import { cardMark, placeCard, postJobCard } from './postJobCard.js';

export type CardRecovery = 'done' | 'busy' | 'retry';

/**
 * For a job whose card is pending (its start was cut short, or Slack was busy): finds the card if
 * it was posted after all, else posts it, and records it. Under the start's lease, so it never
 * races the start itself. When the channel will not take it, the job moves to the person's DM.
 */
export async function recoverJobCard(ctx: JobsContext, record: JobRecord): Promise<CardRecovery> {
  const held = await withRenewedLease(
    ctx.store.atomic,
    startLeaseName(record.startId ?? record.jobId),
    START_LEASE_MS,
    async (lost): Promise<CardRecovery> => {
      const current = await ctx.records.get(record.jobId);
      const pending = current?.pendingCard;
      if (!current || !pending || current.cardTs !== null) return 'done';
      // The channel refused it before, and the DM's post failed for a while: the DM is asked again,
      // its note saying why the channel refused it, as the first try's did.
      if (pending.inDm) return moveToDm(ctx, current, lost, current.cardRefused === 'not_allowed');
      const where = { channel: current.channel, threadTs: pending.threadTs };

      let found: { ts: string } | undefined;
      try {
        found = await findPostedMessage(
          ctx.slack,
          { ...where, since: new Date(pending.since) },
          cardMark(current.jobId),
          ctx.botId,
        );
      } catch (error) {
        if (!isPassingSlackFailure(error)) return cardRefused(ctx, current, error, lost);
        ctx.logger.warn(
          `job ${current.jobId}: could not look for its card in Slack (${String(error)}); trying again`,
        );
        return 'retry';
      }
      if (found) {
        ctx.logger.info(
          `job ${current.jobId}: found its card, posted before a restart; not posting it again`,
        );
        await placeCard(ctx, current, { channel: current.channel, ts: found.ts }, pending.threadTs);
        return 'done';
      }

      // Our lease lapsed meanwhile (a stall, Redis away): the start or another check may be posting
      // the card now. 'busy', and the next check finds it.
      lost.throwIfAborted();
      const posted = await postJobCard(ctx, current, where);
      if (posted.kind === 'later') {
        ctx.logger.warn(
          `job ${current.jobId}: Slack did not take its card yet (${String(posted.error)}); trying again`,
        );
        return 'retry';
      }
      if (posted.kind === 'refused') return cardRefused(ctx, current, posted.error, lost);
      ctx.logger.info(`job ${current.jobId}: posted its card, which a restart or a busy Slack had held up`);
      await placeCard(ctx, current, posted, pending.threadTs);
      return 'done';
    },
    { logger: ctx.logger },
  );
  return held.ran ? held.value : 'busy';
}

/** The channel will not take the card: the job is followed in the person's DM instead, or without a thread. */
async function cardRefused(
  ctx: JobsContext,
  record: JobRecord,
  error: unknown,
  lost: AbortSignal,
): Promise<CardRecovery> {
  ctx.logger.warn(`job ${record.jobId}: Slack refused its card in ${record.channel}: ${String(error)}`);
  // Moving the job posts its card in the DM: only while the lease is ours. Once the pending card
  // says so, the channel is not asked again.
  lost.throwIfAborted();
  const reason = cardRefusalReason(error);
  const moving = await ctx.records.update(record.jobId, (current) =>
    current.pendingCard
      ? { ...current, pendingCard: { ...current.pendingCard, inDm: true }, cardRefused: reason }
      : current,
  );
  return moving ? moveToDm(ctx, moving, lost, postingNotAllowed(error)) : 'done';
}

/**
 * Posts the card in the requester's DM (the door's own answer, an ephemeral or the form, is long
 * gone: the DM is where the person will see it). A post Slack surely did not make (rate limited,
 * unavailable) is asked again at the next check. Any other failure leaves the job followed without a
 * thread (its Home tab and `/docs-agent status` still show it): the post may have landed, and the bot
 * cannot look in the DM for it (finding the DM's channel takes `conversations.open`, and so the
 * `im:write` scope, which the bot does not ask for), so it is not posted twice.
 */
async function moveToDm(
  ctx: JobsContext,
  record: JobRecord,
  lost: AbortSignal,
  /** The channel refused the card though the bot may be a member. */
  notAllowed = false,
): Promise<CardRecovery> {
  lost.throwIfAborted();
  let refusal: unknown;
  const onRefused = (error: unknown) => (refusal = error);
  if (await followInDm(ctx, record, { notAllowed, onRefused })) return 'done';
  if (surelyNotDone(refusal)) return 'retry';
  await ctx.records.update(record.jobId, (current) => ({ ...current, pendingCard: undefined }));
  return 'done';
}
