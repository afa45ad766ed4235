import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { SOMETHING_WRONG } from '../../jobs/doorAnswers.js';
import { handleMessageToBot, type MessageToBot } from '../../jobs/messageToBot.js';
import { withoutBotMention } from '../../slack/botMention.js';
import type { ListenerContext } from '../context.js';
import { answerMessageToBot } from './answerMessageToBot.js';

type MentionArgs = SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs;

/**
 * `@docs-agent <instruction>`: at the top of a channel or in a thread, it starts a job whose
 * thread is that one; in a job's thread, it is a follow-up to that job.
 */
export function registerAppMention(app: App, ctx: ListenerContext): void {
  app.event('app_mention', async ({ event, client, context, logger }: MentionArgs) => {
    if (event.subtype !== undefined) return; // edits and the like
    if (event.bot_id) return; // other bots (and workflows) do not start jobs: no loops between bots
    if (!event.user) return;
    const message: MessageToBot = {
      channel: event.channel,
      ts: event.ts,
      threadTs: event.thread_ts,
      user: event.user,
      text: withoutBotMention(event.text, context.botUserId),
      files: event.files,
      door: 'mention',
      bot: { userId: context.botUserId, botId: context.botId },
    };

    await ctx.inFlight.run(async () => {
      try {
        const outcome = await handleMessageToBot(ctx.jobs, ctx.userNames, message);
        await answerMessageToBot(client, logger, message, outcome);
      } catch (error) {
        logger.error(`a mention could not be handled: ${String(error)}`);
        await client.chat
          .postEphemeral({
            channel: message.channel,
            user: message.user,
            thread_ts: message.threadTs ?? message.ts,
            text: SOMETHING_WRONG,
          })
          .catch(() => {});
      }
    });
  });
}
