import { setTimeout as sleep } from 'node:timers/promises';
import { tsBefore } from '../slack/threadMessages.js';
import type { JobsContext } from './jobsContext.js';

/**
 * Replies in a job's thread reach the job in the order they were written. Each is worked on apart
 * (the requests queue runs many at once), and one can be slower than the next: its names read from
 * Slack, Mintlify asked again. So each notes itself as under way when it is taken up, and before it
 * is sent waits while an earlier reply of the same thread is still under way: "but leave out its
 * last line" does not reach the agent before the reply it is about.
 */

/** How long an earlier reply holds a later one back at most (its run may have died). */
const HELD_BACK_AT_MOST_MS = 20_000;
const CHECK_EVERY_MS = 100;

const underWayKey = (channel: string, threadTs: string) => `replies-under-way:${channel}:${threadTs}`;

export interface ReplyUnderWay {
  /**
   * Resolves once no earlier reply of the thread is under way (or it has waited long enough); rejects
   * once `signal` (its queue job's) is aborted, so that the job goes back to the queue in the stop's grace.
   */
  earlierSent(signal?: AbortSignal): Promise<void>;
  /** This reply is done with, whatever came of it. */
  done(): Promise<void>;
}

export async function replyUnderWay(
  ctx: Pick<JobsContext, 'store' | 'logger' | 'now'>,
  reply: { channel: string; threadTs: string; messageTs: string },
): Promise<ReplyUnderWay> {
  const { atomic } = ctx.store;
  const key = underWayKey(reply.channel, reply.threadTs);
  // Its own time with it: a note left by a run that died holds nothing back for long.
  const member = `${reply.messageTs}/${ctx.now().getTime()}`;
  await atomic.indexAdd(key, member, Number(reply.messageTs), undefined, HELD_BACK_AT_MOST_MS);
  const earlierUnderWay = async () =>
    (await atomic.indexAll(key)).some((other) => {
      const [ts = '', at = '0'] = other.split('/');
      return tsBefore(ts, reply.messageTs) && ctx.now().getTime() - Number(at) < HELD_BACK_AT_MOST_MS;
    });
  return {
    async earlierSent(signal) {
      const until = ctx.now().getTime() + HELD_BACK_AT_MOST_MS;
      while (ctx.now().getTime() < until && (await earlierUnderWay()))
        await sleep(CHECK_EVERY_MS, undefined, { signal });
    },
    async done() {
      await atomic.indexRemove(key, member).catch((error: unknown) => {
        ctx.logger.debug(
          `could not note a reply in ${reply.channel}/${reply.threadTs} as done: ${String(error)}`,
        );
      });
    },
  };
}
