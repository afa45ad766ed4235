import type { App, MessageShortcut } from '@slack/bolt';
import type { Config } from '../../config.js';
import { accessRefusal } from '../../jobs/access.js';
import { chosenMessage, SEND_TO_AGENT_SHORTCUT, sendToAgentModal } from '../../jobs/shortcutModal.js';

const NO_FORM =
  'Sorry, I couldn’t open the form (Slack did not let me in time). Please try the shortcut again.';

/**
 * "Send to docs agent" on a message opens the form at once: the trigger_id is good for 3 s, so
 * nothing touches the store or Mintlify before `views.open`, and the front door runs it itself
 * rather than queue it behind the work of other requests.
 */
export function registerSendToDocsAgent(app: App, access: Config['access']): void {
  app.shortcut<MessageShortcut>(
    { type: 'message_action', callback_id: SEND_TO_AGENT_SHORTCUT },
    async ({ shortcut, ack, client, respond, logger }) => {
      await ack();
      const refusal = accessRefusal(access, shortcut.user.id, shortcut.channel.id);
      if (refusal) {
        await respond({ response_type: 'ephemeral', text: refusal }).catch((error: unknown) =>
          logger.warn(`could not answer the shortcut: ${String(error)}`),
        );
        return;
      }
      try {
        const view = await sendToAgentModal(chosenMessage(shortcut.channel.id, shortcut.message));
        await client.views.open({ trigger_id: shortcut.trigger_id, view });
      } catch (error) {
        logger.error(`could not open the "Send to docs agent" form: ${String(error)}`);
        await respond({ response_type: 'ephemeral', text: NO_FORM }).catch((error: unknown) =>
          logger.warn(`could not answer the shortcut: ${String(error)}`),
        );
      }
    },
  );
}
