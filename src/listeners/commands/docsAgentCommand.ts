import type { App, Logger, RespondArguments, RespondFn, SlashCommand } from '@slack/bolt';
import type { Config } from '../../config.js';
import { digestRequestAnswer, rateLimitWaitText } from '../../digest/digestAnswers.js';
import { postDigestNow } from '../../digest/postDigest.js';
import { accessRefusal } from '../../jobs/access.js';
import { SOMETHING_WRONG } from '../../jobs/doorAnswers.js';
import { budgetNote, USAGE } from '../../jobs/jobAnswers.js';
import { channelJobList } from '../../jobs/jobList.js';
import { startJob } from '../../jobs/startJob.js';
import { decodeEntities } from '../../slack/plainText.js';
import type { ListenerContext } from '../context.js';
import { type DocsAgentRequest, parseDocsAgentCommand } from './parseDocsAgentCommand.js';

const EMPTY = `Tell me what to change in the docs, for example \`/docs-agent Document the new --dry-run flag\`.\n\n${USAGE}`;
const STARTING = ':hourglass_flowing_sand: Starting a docs agent job…';
const GATHERING = ':hourglass_flowing_sand: Gathering the docs digest of the last 7 days…';

/** The work a `/docs-agent` command asks for once it is acknowledged. */
type CommandWork = Extract<DocsAgentRequest, { kind: 'status' | 'digest' | 'instruction' }>;

/**
 * What `/docs-agent` answers within Slack's 3 s, from the payload alone (no I/O), and the work
 * that follows. The thread that acknowledges requests and the one that does the work both ask it,
 * so they always agree.
 */
export function acknowledgeCommand(
  access: Config['access'],
  command: Pick<SlashCommand, 'user_id' | 'channel_id' | 'text'>,
): { reply: RespondArguments | undefined; work: CommandWork | undefined } {
  const ephemeral = (text: string) => ({ response_type: 'ephemeral' as const, text });
  const refusal = accessRefusal(access, command.user_id, command.channel_id);
  if (refusal) return { reply: ephemeral(refusal), work: undefined };
  const request = parseDocsAgentCommand(command.text);
  switch (request.kind) {
    case 'empty':
      return { reply: ephemeral(EMPTY), work: undefined };
    case 'help':
      return { reply: ephemeral(USAGE), work: undefined };
    case 'status':
      return { reply: undefined, work: request };
    case 'digest':
      return { reply: ephemeral(GATHERING), work: request };
    case 'instruction':
      return { reply: ephemeral(STARTING), work: request };
  }
}

export function registerDocsAgentCommand(app: App, ctx: ListenerContext): void {
  app.command('/docs-agent', async ({ command, ack, respond, logger }) => {
    const { reply, work } = acknowledgeCommand(ctx.jobs.config.access, command);
    await ack(reply);
    switch (work?.kind) {
      case undefined:
        return;
      case 'status':
        return answer(respond, logger, async () => {
          const records = await ctx.jobs.records.recentInChannel(command.channel_id, 10);
          return { response_type: 'ephemeral', ...channelJobList(records) };
        });
      case 'digest':
        return answer(respond, logger, async () => {
          const outcome = await postDigestNow(ctx.digest, {
            channel: command.channel_id,
            onLongWait: (waitMs) => {
              const text = rateLimitWaitText(waitMs, ctx.digest.now());
              void respond({ response_type: 'ephemeral', replace_original: true, text }).catch(
                (error: unknown) => logger.warn(`could not answer /docs-agent digest: ${String(error)}`),
              );
            },
          });
          const text = digestRequestAnswer(outcome);
          return text === undefined
            ? { delete_original: true }
            : { response_type: 'ephemeral', replace_original: true, text };
        });
      case 'instruction':
        return answer(respond, logger, async () => {
          const outcome = await startJob(ctx.jobs, {
            // Slack escapes &, < and > in command text; the job gets the text as it was typed.
            prompt: decodeEntities(work.text),
            requestedBy: command.user_id,
            channel: command.channel_id,
            door: 'command',
          });
          if (outcome.kind !== 'started') {
            return { response_type: 'ephemeral', replace_original: true, text: outcome.text };
          }
          const note = budgetNote(outcome.budget);
          return note
            ? { response_type: 'ephemeral', replace_original: true, text: `Job started. ${note}` }
            : { delete_original: true };
        });
    }
  });
}

/**
 * Runs the work after ack() (the work tracks the whole request for shutdown), then answers the person with what it returns.
 * A failure of the work gets a plain answer instead. A failed answer (the response URL refused it)
 * is only logged: the work went through, and "something went wrong" would send the person to do
 * it again.
 */
async function answer(
  respond: RespondFn,
  logger: Pick<Logger, 'error' | 'warn'>,
  work: () => Promise<RespondArguments>,
): Promise<void> {
  let reply: RespondArguments;
  try {
    reply = await work();
  } catch (error) {
    logger.error(`/docs-agent failed: ${String(error)}`);
    reply = { response_type: 'ephemeral', replace_original: true, text: SOMETHING_WRONG };
  }
  await respond(reply).catch((error: unknown) => {
    logger.warn(`/docs-agent: could not answer the person through the response URL: ${String(error)}`);
  });
}
