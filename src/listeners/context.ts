import type { Config } from '../config.js';
import type { DigestItem } from '../digest/fixNote.js';
import type { SlackRequest } from '../requests/slackRequest.js';
import { redisRefusalOf } from '../store/storeErrors.js';

/** What every door (command, event, shortcut, action, view) is given: it reads, acks and enqueues. */
export interface ListenerContext {
  access: Config['access'];
  /**
   * Puts a request on the `requests` queue for the worker. `deliveryId` names Slack's delivery
   * (an event id, a trigger id), so the same request delivered again is queued once. Rejects when
   * the queue could not take it within about a second.
   */
  enqueue: (
    request: SlackRequest,
    deliveryId: string | undefined,
    /**
     * The door answers "nothing was started" when the queue is too slow: an add that lands after all
     * is then taken back. Not for events, which Slack delivers again under the same id (or, in Socket
     * Mode, never again): their late add is the one that counts.
     */
    options?: { takeBackIfLate?: boolean; ifLost?: LostEvent },
  ) => Promise<void>;
  /** The little a listener does after its ack (open the shortcut's form): stopping waits for it. */
  track: (work: Promise<void>) => void;
  /**
   * Who is starting a job from a digest's item now (its form submitted, the job not yet noted on the
   * digest): one quick read, before the form opens within Slack's 3 s. None when the store is slow to say.
   */
  fixesStarting: (item: DigestItem) => Promise<string[]>;
}

/**
 * An event that may be given up on: Slack's last delivery of it over HTTP (its third retry), or one
 * Socket Mode's hold never got queued. Every add of it is then withdrawn, and the person told.
 */
export interface LostEvent {
  /** Slack will not send it again if this delivery fails (`context.retryNum` 3). */
  lastDelivery: boolean;
  /**
   * Tells the person their message was lost (nothing started): asked once, after the ack. None for
   * an event nobody expects an answer to (an edit, a reply that is also a mention, which tells).
   */
  tell?: () => Promise<unknown>;
}

/** Slack delivers an event at most four times: at first, then three retries (`x-slack-retry-num`). */
export const lastDelivery = (context: { retryNum?: number | undefined }): boolean =>
  (context.retryNum ?? 0) >= 3;

/** The answer to a request the queue could not take: nothing was started, and nothing is lost by trying again. */
export const TRY_AGAIN_SHORTLY =
  'Sorry, I couldn’t take that right now (my storage may be unavailable). Nothing was started: please try again shortly.';

/**
 * The queue's connection dropped with the request on its way: it may be queued, and run, although
 * the add was never confirmed. The person is told so, rather than to try again (which would start it twice).
 */
export class MayHaveQueuedError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the queue's answer was lost with its connection: the request may be queued (${String(cause)})`);
    this.name = 'MayHaveQueuedError';
  }
}

/** The answer to a request whose add was sent but never confirmed. */
export const MAY_HAVE_QUEUED =
  'Sorry, I lost my storage’s answer while taking that, so it may go ahead anyway. Please give it a minute before asking again: asking now could do it twice.';

/** What a door answers when its request could not be queued. */
export const notQueuedText = (error: unknown): string =>
  error instanceof MayHaveQueuedError ? MAY_HAVE_QUEUED : TRY_AGAIN_SHORTLY;

/**
 * Why a request was not queued, for the log: Redis's trouble in plain words when it is that (a full
 * Redis's refusal names a Lua script by its hash, which differs from add to add).
 */
export const notQueuedReason = (error: unknown): string => redisRefusalOf(error) ?? String(error);
