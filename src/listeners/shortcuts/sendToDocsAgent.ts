import type { AllMiddlewareArgs, App, MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { accessRefusal } from '../../jobs/access.js';
import { chosenMessage, SEND_TO_AGENT_SHORTCUT, sendToAgentModal } from '../../jobs/shortcutModal.js';
import type { ListenerContext } from '../context.js';
import { formNotOpenedText } from '../formNotOpened.js';

type ShortcutArgs = SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs;

/**
 * "Send to docs agent" on a message opens the form. The trigger_id is good for 3 s, so the web
 * role opens it itself (nothing touches the store or Mintlify first) rather than queue it, and
 * after the ack, so the ack never waits for `views.open`.
 */
export function sendToDocsAgent(ctx: ListenerContext) {
  return async ({ shortcut, ack, client, respond, logger }: ShortcutArgs): Promise<void> => {
    await ack();
    const tell = async (text: string) => {
      await respond({ response_type: 'ephemeral', text }).catch((error: unknown) =>
        logger.warn(`could not answer the shortcut: ${String(error)}`),
      );
    };
    const refusal = accessRefusal(ctx.access, shortcut.user.id, shortcut.channel.id);
    if (refusal) return ctx.track(tell(refusal));
    const open = async () => {
      try {
        const view = await sendToAgentModal(chosenMessage(shortcut.channel.id, shortcut.message));
        await client.views.open({ trigger_id: shortcut.trigger_id, view });
      } catch (error) {
        logger.error(`could not open the "Send to docs agent" form: ${String(error)}`);
        await tell(formNotOpenedText(error, 'Please try the shortcut again.'));
      }
    };
    ctx.track(open());
  };
}

export function registerSendToDocsAgent(app: App, ctx: ListenerContext): void {
  app.shortcut<MessageShortcut>(
    { type: 'message_action', callback_id: SEND_TO_AGENT_SHORTCUT },
    sendToDocsAgent(ctx),
  );
}
