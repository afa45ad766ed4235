import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  types,
  ViewOutput,
  ViewResponseAction,
  ViewSubmitAction,
} from '@slack/bolt';
import type { Config } from '../../config.js';
import { accessRefusal } from '../../jobs/access.js';
import { commandWordText, NO_STOP_TEXT } from '../../jobs/doorAnswers.js';
import { commandWordOf, isStopWord, mistypedCommandOf, smallTalkOf } from '../../jobs/smallTalk.js';
import {
  type ChosenMessage,
  INSTRUCTION_BLOCK,
  readSubmission,
  SEND_TO_AGENT_FORM,
  type Submission,
} from '../../jobs/shortcutModal.js';
import {
  type ListenerContext,
  MAY_HAVE_QUEUED,
  MayHaveQueuedError,
  notQueuedReason,
  notQueuedText,
} from '../context.js';

const EMPTY = 'Tell the agent what to change in the docs.';
const STALE = 'This form is out of date. Close it and use “Send to docs agent” on the message again.';
const NO_INSTRUCTION =
  'That is no instruction for the agent, so no job was started: tell it what to change in the docs.';

/**
 * Words that are no instruction, read as every door reads them (a test, a thanks, a greeting, a
 * lone stop, a subcommand's word, mistyped or not): sent, each would start a job of that name.
 */
function notAnInstruction(instruction: string): string | undefined {
  const word = commandWordOf(instruction);
  if (word) return commandWordText(word, 'form');
  if (isStopWord(instruction)) return NO_STOP_TEXT;
  // `statsu`: a subcommand mistyped, as the other doors read it.
  if (mistypedCommandOf(instruction)) return NO_INSTRUCTION;
  return smallTalkOf(instruction) === undefined ? undefined : NO_INSTRUCTION;
}

/**
 * What the submitted form answers within Slack's 3 s: form errors from checks that need no I/O,
 * or nothing (the form closes) and the submission to act on.
 */
export function acknowledgeForm(
  access: Config['access'],
  view: ViewOutput,
  user: string,
): {
  reply: ViewResponseAction | undefined;
  submission: (Submission & { message: ChosenMessage }) | undefined;
} {
  const submission = readSubmission(view);
  const { instruction, message } = submission;
  const problem =
    instruction === ''
      ? EMPTY
      : !message
        ? STALE
        : (accessRefusal(access, user, message.channel) ?? notAnInstruction(instruction));
  if (problem || !message) {
    return {
      reply: { response_action: 'errors', errors: { [INSTRUCTION_BLOCK]: problem ?? STALE } },
      submission: undefined,
    };
  }
  return { reply: undefined, submission: { ...submission, message } };
}

type FormArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/**
 * The submitted form: checked, queued, then closed. The job is created by the worker after the
 * form closed (see `answerForm`), which tells the person in their DM how it went.
 */
export function sendToDocsAgentForm(ctx: ListenerContext) {
  return async ({ ack, body, view, logger }: FormArgs): Promise<void> => {
    const user = body.user.id;
    const { reply, submission } = acknowledgeForm(ctx.access, view, user);
    if (submission) {
      const { instruction, includeThread, message } = submission;
      try {
        await ctx.enqueue(
          { kind: 'form_submission', user, instruction, includeThread, message, viewId: view.id },
          body.trigger_id,
          { takeBackIfLate: true },
        );
      } catch (error) {
        logger.error(`could not queue a "Send to docs agent" form: ${notQueuedReason(error)}`);
        if (error instanceof MayHaveQueuedError) {
          // Not left open with its Submit button: a second submission would start a second job.
          await ack({ response_action: 'update', view: mayHaveQueuedView() });
          return;
        }
        await ack({ response_action: 'errors', errors: { [INSTRUCTION_BLOCK]: notQueuedText(error) } });
        return;
      }
    }
    await ack(reply);
  };
}

export function registerSendToDocsAgentForm(app: App, ctx: ListenerContext): void {
  app.view({ callback_id: SEND_TO_AGENT_FORM, type: 'view_submission' }, sendToDocsAgentForm(ctx));
}

/** The form, replaced by what the person must know: the job may start, so no second submission. */
function mayHaveQueuedView(): types.ModalView {
  return {
    type: 'modal',
    title: { type: 'plain_text', text: 'Send to docs agent' },
    close: { type: 'plain_text', text: 'Close' },
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: MAY_HAVE_QUEUED } }],
  };
}
