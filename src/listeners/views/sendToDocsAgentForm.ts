import type { App, Logger, ViewOutput, ViewResponseAction, webApi } from '@slack/bolt';
import type { Config } from '../../config.js';
import { accessRefusal } from '../../jobs/access.js';
import { shortcutFailureText, SOMETHING_WRONG } from '../../jobs/doorAnswers.js';
import { budgetNote } from '../../jobs/jobAnswers.js';
import {
  type ChosenMessage,
  INSTRUCTION_BLOCK,
  readSubmission,
  SEND_TO_AGENT_FORM,
  type Submission,
} from '../../jobs/shortcutModal.js';
import { type ShortcutOutcome, startFromShortcut } from '../../jobs/startFromShortcut.js';
import type { ListenerContext } from '../context.js';

const EMPTY = 'Tell the agent what to change in the docs.';
const STALE = 'This form is out of date. Close it and use “Send to docs agent” on the message again.';

/**
 * What the submitted form answers within Slack's 3 s: form errors from checks that need no I/O,
 * or nothing (the form closes) and the submission to act on. The thread that acknowledges
 * requests and the one that does the work both ask it, so they always agree.
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
    instruction === '' ? EMPTY : !message ? STALE : accessRefusal(access, user, message.channel);
  if (problem || !message) {
    return {
      reply: { response_action: 'errors', errors: { [INSTRUCTION_BLOCK]: problem ?? STALE } },
      submission: undefined,
    };
  }
  return { reply: undefined, submission: { ...submission, message } };
}

/**
 * The submitted form. The job is created after the form closes, because creating it (a Mintlify
 * POST that is never retried, then the card) cannot be bounded to 3 s, and a timeout there could
 * hide a job that did start. What goes wrong after that is told in the person's DM.
 */
export function registerSendToDocsAgentForm(app: App, ctx: ListenerContext): void {
  app.view(
    { callback_id: SEND_TO_AGENT_FORM, type: 'view_submission' },
    async ({ ack, body, view, client, context, logger }) => {
      const user = body.user.id;
      const { reply, submission } = acknowledgeForm(ctx.jobs.config.access, view, user);
      await ack(reply);
      if (!submission) return;
      const { instruction, includeThread, message } = submission;

      try {
        const outcome = await startFromShortcut(ctx.jobs, ctx.userNames, {
          user,
          instruction,
          includeThread,
          message,
          bot: { userId: context.botUserId, botId: context.botId },
        });
        await tellPerson(client, logger, user, instruction, outcome);
      } catch (error) {
        logger.error(`a "Send to docs agent" job could not be started: ${String(error)}`);
        await dm(client, logger, user, shortcutFailureText(SOMETHING_WRONG, instruction));
      }
    },
  );
}

async function tellPerson(
  client: webApi.WebClient,
  logger: Logger,
  user: string,
  instruction: string,
  outcome: ShortcutOutcome,
): Promise<void> {
  switch (outcome.kind) {
    case 'started': {
      const note = budgetNote(outcome.budget);
      const { channel, threadTs } = outcome.record;
      if (note && threadTs) {
        await client.chat
          .postEphemeral({ channel, user, thread_ts: threadTs, text: note })
          .catch((error: unknown) => logger.warn(`could not tell ${user} the budget: ${String(error)}`));
      }
      return;
    }
    case 'unposted':
      return dm(client, logger, user, outcome.text);
    case 'failed':
      return dm(client, logger, user, shortcutFailureText(outcome.text, instruction));
  }
}

/** The form is closed by now: the person's DM with the bot is where the answer cannot get lost. */
async function dm(client: webApi.WebClient, logger: Logger, user: string, text: string): Promise<void> {
  await client.chat.postMessage({ channel: user, text, unfurl_links: false }).catch((error: unknown) => {
    logger.error(`could not tell ${user} in a DM that their job did not start: ${String(error)}`);
  });
}
