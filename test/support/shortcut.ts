import type { SlackCall } from '../fakes/slackFake.js';
import { type BotHarness, SECRETS } from './botHarness.js';
import { sendFormSubmission, sendInteraction } from './slackRequests.js';

const team = { id: 'T0TEAM', domain: 'acme' };

/** "Send to docs agent" chosen on a message, as Slack sends it. */
export function chooseShortcut(
  h: BotHarness,
  message: {
    ts: string;
    user: string;
    text: string;
    thread_ts?: string;
    files?: Array<{ name: string }>;
    blocks?: unknown[];
    attachments?: unknown[];
  },
) {
  return sendInteraction(h.url, SECRETS.signingSecret, {
    type: 'message_action',
    callback_id: 'send_to_docs_agent',
    trigger_id: '1111.2222.abcd',
    message_ts: message.ts,
    response_url: h.slack.responseUrl('shortcut'),
    message: { type: 'message', ...message },
    user: { id: 'U0USER', name: 'user', team_id: 'T0TEAM' },
    channel: { id: 'C0DOCS', name: 'docs' },
    team,
    token: 'deprecated',
    action_ts: '1700000000.1',
  });
}

/** "Send to docs agent" chosen on a message: the form it opens (its views.open). */
export async function openForm(
  h: BotHarness,
  message: Parameters<typeof chooseShortcut>[1],
): Promise<SlackCall> {
  await chooseShortcut(h, message);
  return h.slack.waitForCall('views.open');
}

/** The form submitted, with what the person typed and ticked. */
export function submit(h: BotHarness, opened: SlackCall, instruction: string, includeThread = false) {
  return sendFormSubmission(h.url, SECRETS.signingSecret, opened, {
    instruction: { instruction_input: { type: 'plain_text_input', value: instruction } },
    ...(includeThread
      ? {
          thread: {
            include_thread: {
              type: 'checkboxes',
              selected_options: [
                { value: 'thread', text: { type: 'plain_text', text: 'Include the whole thread' } },
              ],
            },
          },
        }
      : {}),
  });
}
