import type { App, RespondFn } from '@slack/bolt';
import { digestRequestAnswer, rateLimitWaitText } from '../../digest/digestAnswers.js';
import { postDigestNow } from '../../digest/postDigest.js';
import { accessRefusal } from '../../jobs/access.js';
import { budgetNote, USAGE } from '../../jobs/jobAnswers.js';
import { channelJobList } from '../../jobs/jobList.js';
import { startJob } from '../../jobs/startJob.js';
import { decodeEntities } from '../../slack/plainText.js';
import type { ListenerContext } from '../context.js';
import { parseDocsAgentCommand } from './parseDocsAgentCommand.js';

const EMPTY = `Tell me what to change in the docs, for example \`/docs-agent Document the new --dry-run flag\`.\n\n${USAGE}`;
const SOMETHING_WRONG =
  'Sorry, something went wrong on my side (my storage may be unavailable). Please try again shortly.';

export function registerDocsAgentCommand(app: App, ctx: ListenerContext): void {
  app.command('/docs-agent', async ({ command, ack, respond, logger }) => {
    const refusal = accessRefusal(ctx.jobs.config.access, command.user_id, command.channel_id);
    if (refusal) return ack({ response_type: 'ephemeral', text: refusal });

    const request = parseDocsAgentCommand(command.text);
    switch (request.kind) {
      case 'empty':
        return ack({ response_type: 'ephemeral', text: EMPTY });
      case 'help':
        return ack({ response_type: 'ephemeral', text: USAGE });
      case 'status': {
        await ack();
        return answer(ctx, respond, logger, async () => {
          const records = await ctx.jobs.records.recentInChannel(command.channel_id, 10);
          await respond({ response_type: 'ephemeral', ...channelJobList(records) });
        });
      }
      case 'digest': {
        await ack({
          response_type: 'ephemeral',
          text: ':hourglass_flowing_sand: Gathering the docs digest of the last 7 days…',
        });
        return answer(ctx, respond, logger, async () => {
          const outcome = await postDigestNow(ctx.digest, {
            channel: command.channel_id,
            onLongWait: (waitMs) => {
              const text = rateLimitWaitText(waitMs, ctx.digest.now());
              void respond({ response_type: 'ephemeral', replace_original: true, text }).catch(() => {});
            },
          });
          const text = digestRequestAnswer(outcome);
          await respond(
            text === undefined
              ? { delete_original: true }
              : { response_type: 'ephemeral', replace_original: true, text },
          );
        });
      }
      case 'instruction': {
        await ack({
          response_type: 'ephemeral',
          text: ':hourglass_flowing_sand: Starting a docs agent job…',
        });
        return answer(ctx, respond, logger, async () => {
          const outcome = await startJob(ctx.jobs, {
            // Slack escapes &, < and > in command text; the job gets the text as it was typed.
            prompt: decodeEntities(request.text),
            requestedBy: command.user_id,
            channel: command.channel_id,
            door: 'command',
          });
          if (outcome.kind === 'started') {
            const note = budgetNote(outcome.budget);
            await respond(
              note
                ? { response_type: 'ephemeral', replace_original: true, text: `Job started. ${note}` }
                : { delete_original: true },
            );
          } else {
            await respond({ response_type: 'ephemeral', replace_original: true, text: outcome.text });
          }
        });
      }
    }
  });
}

/** Runs the work after ack(), tracked for shutdown; an unexpected failure still gets a plain answer. */
async function answer(
  ctx: ListenerContext,
  respond: RespondFn,
  logger: { error: (...args: unknown[]) => void },
  work: () => Promise<void>,
): Promise<void> {
  await ctx.inFlight.run(async () => {
    try {
      await work();
    } catch (error) {
      logger.error(`/docs-agent failed: ${String(error)}`);
      await respond({ response_type: 'ephemeral', replace_original: true, text: SOMETHING_WRONG }).catch(
        () => {},
      );
    }
  });
}
