import type { MessageToBot } from '../jobs/messageToBot.js';
import type { ChosenMessage } from '../jobs/shortcutModal.js';
import type { ThreadMessage } from '../slack/threadMessages.js';
import type { FollowUpPlace } from './answerFollowUp.js';

/**
 * A Slack request that needs work, as a listener puts it on the `requests` queue once it has
 * read it: plain data (it crosses Redis), decided from the payload alone. The worker's processor
 * (`processRequest`) runs the use case and answers the person.
 */
export type SlackRequest =
  /** `/docs-agent <instruction>`: `responseUrl` answers the person who typed it. */
  | { kind: 'command_start'; text: string; user: string; channel: string; responseUrl: string }
  /** `user`: who typed it (absent from a request an older version queued). */
  | { kind: 'command_status'; channel: string; responseUrl: string; user?: string }
  | { kind: 'command_digest'; channel: string; responseUrl: string }
  /** A reply in some thread: the processor tells whether it is a job's. */
  | {
      kind: 'thread_reply';
      place: FollowUpPlace;
      text: string;
      files?: ThreadMessage['files'];
      /** A message forwarded with the reply (Slack markup). */
      forwarded?: string;
      /** An edit of the reply (`text` is its words now): the edit's ts. */
      editedTs?: string;
    }
  /** A mention, or a message in the bot's DM. */
  | { kind: 'message_to_bot'; message: MessageToBot }
  /** The "Send to docs agent" form, submitted. */
  | {
      kind: 'form_submission';
      user: string;
      instruction: string;
      includeThread: boolean;
      message: ChosenMessage;
      /** The form's view: submitted twice, it starts one job (absent from a request an older version queued). */
      viewId?: string;
    }
  | { kind: 'home_opened'; user: string };
