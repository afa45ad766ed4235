import { followedHereText } from './doorAnswers.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import type { StartJobOutcome } from './startJob.js';
import { postJobCard } from './postJobCard.js';
import { againOnceRedisAnswers } from './onceRedisAnswers.js';
import { isStoreUnavailable } from '../store/storeErrors.js';

/** How long the record of a card moved to a DM is tried to be written while Redis is away. */
const KEEP_MOVE_MS = 30 * 60_000;

/**
 * A job whose card could not be posted where it was asked for (the bot is not in that channel, or
 * may not post there) moves to the requester's DM with the bot: the card is posted there, its
 * thread becomes the job's thread, and the follower reports there. Returns the moved record, or
 * undefined when Slack would not take the DM either (the job is still followed, without a thread).
 */
export async function followInDm(
  ctx: JobsContext,
  record: JobRecord,
  options: {
    /** The channel refused the card though the bot may be a member (postingNotAllowed): the note says so. */
    notAllowed?: boolean;
    /** Told why the DM did not take the card, when it did not. */
    onRefused?: (error: unknown) => void;
  } = {},
): Promise<JobRecord | undefined> {
  const wanted = record.channel;
  let posted: Awaited<ReturnType<typeof postJobCard>>;
  try {
    // Posting to a user id lands in the app's DM with that person (chat:write is enough).
    posted = await postJobCard(ctx, record, { channel: record.requestedBy, inDm: true });
    if (posted.kind !== 'posted') throw posted.error;
  } catch (error) {
    ctx.logger.warn(`job ${record.jobId}: could not post its card in the DM either: ${String(error)}`);
    options.onRefused?.(error);
    return undefined;
  }
  const place = { channel: posted.channel, threadTs: posted.ts, cardTs: posted.ts, pendingCard: undefined };
  // Read again: the follower may have saved news of the job since it was created.
  const move = () => ctx.records.update(record.jobId, (current) => ({ ...current, ...place }));
  const moved = await move().catch((error: unknown) => {
    // The card is in the DM: its record says so once Redis answers, and the job's news goes there then.
    if (isStoreUnavailable(error)) {
      ctx.logger.warn(`job ${record.jobId}: its card is in the DM; its record says so once Redis answers`);
      againOnceRedisAnswers(ctx, async () => void (await move()), {
        forMs: KEEP_MOVE_MS,
        undone: (why) =>
          ctx.logger.error(
            `job ${record.jobId}: its card is in the DM, but the record could not say so (${why})`,
          ),
      });
    } else
      ctx.logger.error(
        `job ${record.jobId}: its card is in the DM, but the record could not say so: ${String(error)}`,
      );
    return undefined;
  });
  await ctx.slack.chat
    .postMessage({
      channel: place.channel,
      thread_ts: place.threadTs,
      text: followedHereText(wanted, options.notAllowed),
    })
    .catch((error: unknown) =>
      ctx.logger.warn(`could not explain the DM card of ${record.jobId}: ${String(error)}`),
    );
  ctx.logger.info(`job ${record.jobId} is followed in ${record.requestedBy}'s DM instead of ${wanted}`);
  // The requester's Home tab links the job's thread: now the DM's.
  if (moved) ctx.onJobChanged?.(moved);
  return moved ?? { ...record, ...place };
}

/**
 * A started job whose card Slack refused where it was asked for, for good (a channel the bot is not
 * in, a DM between people, a channel where posting is limited): it is followed in the person's DM,
 * as from every door that asks in a channel. Slack only busy: the follower posts the card where it
 * was asked for, shortly. Returns the moved record, or undefined when the job stays where it was
 * asked for or the DM would not take its card either.
 */
export async function followUnpostedInDm(
  ctx: JobsContext,
  unposted: Extract<StartJobOutcome, { kind: 'unposted' }>,
): Promise<JobRecord | undefined> {
  if (unposted.reason === 'later') return undefined;
  return followInDm(ctx, unposted.record, { notAllowed: unposted.reason === 'not_allowed' });
}
