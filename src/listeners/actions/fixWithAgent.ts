import type { AllMiddlewareArgs, App, BlockButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import {
  FIX_WITH_AGENT_ACTION,
  parseStruggleValue,
  suggestedInstruction,
} from '../../digest/strugglesMessage.js';
import { fixesNoted } from '../../digest/fixNote.js';
import { accessRefusal } from '../../jobs/access.js';
import { sendToAgentModal } from '../../jobs/shortcutModal.js';
import type { ListenerContext } from '../context.js';
import { formNotOpenedText } from '../formNotOpened.js';

const NOT_OURS =
  'This button is out of date. Use the latest digest, or start a job with `/docs-agent &lt;instruction&gt;`.';

type ButtonArgs = SlackActionMiddlewareArgs<BlockButtonAction> & AllMiddlewareArgs;

/**
 * "Fix with the docs agent" on an item of the digest: the message shortcut's form, its instruction
 * filled in and the item's evidence shown. Opened by the web role after the ack, as the shortcut's
 * is (the trigger is good for 3 s); the submission is the form's, so every door's rules apply.
 */
export function fixWithAgent(ctx: ListenerContext) {
  return async ({ ack, body, action, client, respond, logger }: ButtonArgs): Promise<void> => {
    await ack();
    const tell = async (text: string) => {
      await respond({ response_type: 'ephemeral', replace_original: false, text }).catch((error: unknown) =>
        logger.warn(`could not answer the digest's button: ${String(error)}`),
      );
    };
    const channel = body.channel?.id;
    const ts = body.message?.ts;
    const value = parseStruggleValue(action.value);
    if (!channel || !ts || !value) return ctx.track(tell(NOT_OURS));
    const refusal = accessRefusal(ctx.access, body.user.id, channel);
    if (refusal) return ctx.track(tell(refusal));
    const open = async () => {
      try {
        const noted = fixedBy(body, action.block_id);
        // Someone whose job for the item is still being started is not on the digest yet.
        const starting = (await ctx.fixesStarting({ channel, ts, struggle: value })).filter(
          (name) => !noted.includes(name),
        );
        const view = await sendToAgentModal(
          { channel, ts, text: '', files: [], struggle: value },
          { instruction: suggestedInstruction(value), fixedBy: noted, startingBy: starting },
        );
        await client.views.open({ trigger_id: body.trigger_id, view });
      } catch (error) {
        logger.error(`could not open the form of the digest's button: ${String(error)}`);
        await tell(formNotOpenedText(error, 'Please click the button again.'));
      }
    };
    ctx.track(open());
  };
}

/** Who the clicked item, as the digest shows it now, says started a job for it already. */
function fixedBy(body: BlockButtonAction, blockId: string): string[] {
  const blocks = (body.message?.blocks ?? []) as Array<{ block_id?: string; text?: { text?: string } }>;
  const item = blocks.find((block) => block.block_id === blockId);
  return fixesNoted(item?.text?.text ?? '');
}

export function registerFixWithAgent(app: App, ctx: ListenerContext): void {
  app.action<BlockButtonAction>(FIX_WITH_AGENT_ACTION, fixWithAgent(ctx));
}
