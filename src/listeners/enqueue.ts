import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { Submission, WorkQueue } from '../queue/queue.js';
import type { SlackRequest } from '../requests/slackRequest.js';
import { retryInBackground } from '../store/retryInBackground.js';
import { TooLateError, withTimeout } from '../withTimeout.js';
import { type ListenerContext, type LostEvent, MayHaveQueuedError, notQueuedReason } from './context.js';

/** How long a listener waits for the queue to take a request before it answers "try again shortly". */
const ENQUEUE_TIMEOUT_MS = 1_000;
/**
 * In Socket Mode Slack's events are acknowledged before the listener runs, and never sent again:
 * one the queue could not take is tried again this often, for this long, by the process holding it.
 */
const HOLD_EVENT_EVERY_MS = 2_000;
const HOLD_EVENT_FOR_MS = 10 * 60_000;
/** How often a withdrawal Redis could not take is sent again (for as long as an event is held). */
const TAKE_BACK_EVERY_MS = 1_000;
/** How long a lost event's withdrawal is sent again while Redis cannot take it. */
const WITHDRAW_LOST_FOR_MS = 24 * 3_600_000;

/**
 * The hand-off of the web role: a listener's request onto the `requests` queue, within a second or
 * "try again shortly", and what a late or failed add leaves to do (an event held in Socket Mode, a
 * request taken back). `stop` says what is left undone.
 */
export function createEnqueue(options: {
  requests: WorkQueue<SlackRequest>;
  logger: Logger;
  /** Socket Mode's events are never sent again: one the queue could not take is held and added again. */
  socketMode: boolean;
  /** Work after the ack (telling a person their message was lost): stopping waits for it. */
  track: ListenerContext['track'];
  /** How long an event is held in Socket Mode (default 10 minutes). */
  holdEventForMs?: number;
}): { enqueue: ListenerContext['enqueue']; stop(): void } {
  const { requests, logger } = options;
  const holdEventForMs = options.holdEventForMs ?? HOLD_EVENT_FOR_MS;
  const enqueue: ListenerContext['enqueue'] = async (request, deliveryId, enqueueOptions = {}) => {
    // Queue job ids are Slack's delivery ids: the same delivery again (a replay, a retry) is queued once.
    const jobId = `${request.kind}-${deliveryId ?? randomUUID()}`;
    // One round trip: whether an earlier delivery holds the id matters only to a late add's take-back.
    const submission = requests.submit(request.kind, request, { jobId });
    try {
      await withTimeout(submission.queued, ENQUEUE_TIMEOUT_MS, 'the queue did not take it');
    } catch (error) {
      if (enqueueOptions.takeBackIfLate) {
        // Too slow: taken back. Sent, and its answer lost with the connection: it may run, and the
        // person is told so (asking again would start it twice). Refused or never sent: nothing to do.
        if (error instanceof TooLateError) takeBack(submission, jobId);
        else if (submission.mayHaveLanded) throw new MayHaveQueuedError(error);
      } else if (options.socketMode)
        return holdEvent(request, jobId, submission, error, enqueueOptions.ifLost);
      else if (enqueueOptions.ifLost?.lastDelivery) {
        // Answered as handled, so that Slack stops: what it would have done is given up on here.
        submission.abandon();
        submission.queued.catch(() => {});
        return lose(
          request,
          jobId,
          `Slack sends it no more (${notQueuedReason(error)})`,
          enqueueOptions.ifLost,
        );
      } else submission.queued.catch(() => {}); // an event's late add stands; its failure is the error below
      throw error;
    }
  };
  /**
   * An event no delivery got queued, which Slack (or Socket Mode's hold) will not bring again: every
   * add of it, by any delivery in any process, is withdrawn (one may still land, late), and the
   * person is told to send it again rather than left waiting for an answer that never comes.
   */
  const lose = (request: SlackRequest, jobId: string, why: string, lost: LostEvent | undefined): void => {
    logger.error(
      `a Slack event (${request.kind}) was never queued, and is lost: ${why}${lost?.tell ? '; its author is told so' : ''}`,
    );
    if (!lost) return;
    withdrawEvery(jobId);
    if (lost.tell) {
      options.track(
        lost.tell().then(
          () => {},
          (error: unknown) => logger.warn(`could not tell a person their message was lost: ${String(error)}`),
        ),
      );
    }
  };
  /**
   * An event Socket Mode has acknowledged already (Slack will not send it again), which the queue
   * did not take: this process adds it again until the queue takes it (the same queue job id, so
   * an add that landed late is not doubled), or the bot stops.
   */
  let stopped = false;
  const held = new Set<string>();
  const holdEvent = (
    request: SlackRequest,
    jobId: string,
    first: Submission,
    error: unknown,
    lost: LostEvent | undefined,
  ): void => {
    if (stopped) {
      logger.error(
        `a Slack event (${request.kind}) the queue did not take is lost: the bot is stopping (${notQueuedReason(error)})`,
      );
      return;
    }
    held.add(jobId);
    logger.warn(
      `a Slack event (${request.kind}) could not be queued (${notQueuedReason(error)}); Socket Mode does not send it again, so it is queued once Redis answers`,
    );
    let submission = first;
    retryInBackground(
      async () => {
        try {
          // Bounded: an add may wait on Redis for as long as it is away (a queue set up again waits
          // for it), and the hold must still be given up on in time.
          await withTimeout(submission.queued, HOLD_EVENT_EVERY_MS, 'the queue did not take it yet');
          held.delete(jobId);
          return true;
        } catch (notYet) {
          // One still on its way is looked at again next time; one that failed is made again.
          if (!(notYet instanceof TooLateError)) {
            submission = requests.submit(request.kind, request, { jobId });
            submission.queued.catch(() => {});
          }
          throw notYet;
        }
      },
      {
        everyMs: HOLD_EVENT_EVERY_MS,
        forMs: holdEventForMs,
        wanted: () => !stopped,
        retryOn: () => true,
        giveUp: (why) => {
          held.delete(jobId);
          submission.abandon();
          lose(request, jobId, why, lost);
        },
      },
    );
  };
  /**
   * The person was told nothing was started: the late add is withdrawn at once (the mark reaches
   * Redis right behind it, so its processor does nothing), and removed once it has landed. A
   * withdrawal Redis could not take (the connection dropped meanwhile) is sent again until it can.
   */
  const takingBack = new Set<string>();
  const takeBack = (submission: Submission, jobId: string): void => {
    // Not sent yet (waiting on Redis), it never is; sent, it is withdrawn.
    submission.abandon();
    sendWithdrawal(
      jobId,
      submission.stamp,
      'take back a request queued late',
      HOLD_EVENT_FOR_MS,
      async () => {
        // Removed once it has landed: nothing of it is left on the queue.
        await submission.queued;
        if (!(await requests.remove(jobId, submission.stamp))) {
          logger.warn(
            `a request answered "try again shortly" reached the queue late and could not be removed (${jobId}): ` +
              'its worker does nothing with it, unless it started before the withdrawal reached Redis',
          );
        }
      },
    );
  };

  /**
   * Every add of a lost event withdrawn, for as long as the mark would be kept: an add of it may wait
   * on Redis until it is back.
   */
  const withdrawEvery = (jobId: string): void =>
    sendWithdrawal(jobId, undefined, 'withdraw a lost Slack event', WITHDRAW_LOST_FOR_MS);

  /**
   * A withdrawal (of one submission's add, by its stamp, or of every add of the id), sent at once,
   * right behind the add, and again every second while Redis cannot take it; `then` once it is in.
   */
  const sendWithdrawal = (
    jobId: string,
    stamp: number | undefined,
    what: string,
    forMs: number,
    then?: () => Promise<void>,
  ): void => {
    const attempt = async (): Promise<true> => {
      await requests.withdraw(jobId, stamp);
      takingBack.delete(jobId);
      void then?.().catch(() => {}); // an add that failed for good has nothing left to take back
      return true;
    };
    attempt().catch((error: unknown) => {
      takingBack.add(jobId);
      logger.warn(`could not ${what} (${jobId}) yet: ${String(error)}`);
      retryInBackground(attempt, {
        everyMs: TAKE_BACK_EVERY_MS,
        forMs,
        wanted: () => !stopped,
        retryOn: () => true,
        giveUp: (why) => {
          takingBack.delete(jobId);
          logger.warn(`could not ${what} (${jobId}): ${why}`);
        },
      });
    });
  };

  return {
    enqueue,
    stop() {
      stopped = true;
      if (held.size > 0) {
        logger.error(
          `${held.size} Slack event(s) the queue never took are lost: the bot stopped before Redis answered`,
        );
      }
      for (const jobId of takingBack) {
        logger.error(
          `a request its author was told was not taken may still run (${jobId}): the bot stopped before Redis took its withdrawal`,
        );
      }
    },
  };
}
