import { isPassingSlackFailure, slackErrorCode } from '../slack/slackErrors.js';

/** Slack's answers to a form opened after its trigger expired (3 s) or was used already. */
const TRIGGER_GONE = new Set(['expired_trigger_id', 'exchanged_trigger_id', 'trigger_exchanged']);

/**
 * What the person is told when their form could not be opened: too late, and they may try again;
 * or refused, and the slash command still works.
 */
export function formNotOpenedText(error: unknown, tryAgain: string): string {
  const code = slackErrorCode(error);
  if (code === undefined || TRIGGER_GONE.has(code)) {
    return `Sorry, I couldn’t open the form (Slack did not let me in time). ${tryAgain}`;
  }
  if (isPassingSlackFailure(error)) return `Sorry, I couldn’t open the form (Slack was busy). ${tryAgain}`;
  return `Sorry, I couldn’t open the form (Slack refused it: ${code}). Start the job with \`/docs-agent &lt;instruction&gt;\` instead.`;
}
