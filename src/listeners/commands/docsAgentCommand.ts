import type {
  AllMiddlewareArgs,
  App,
  RespondArguments,
  SlackCommandMiddlewareArgs,
  SlashCommand,
} from '@slack/bolt';
import type { Config } from '../../config.js';
import { accessRefusal } from '../../jobs/access.js';
import { NO_STOP_TEXT } from '../../jobs/doorAnswers.js';
import { COMMAND_DM_USAGE, USAGE } from '../../jobs/jobAnswers.js';
import { isDirectMessage } from '../../slack/conversations.js';
import { escapeSlackText, truncate } from '../../slack/escape.js';
import { decodeEntities } from '../../slack/plainText.js';
import type { SlackRequest } from '../../requests/slackRequest.js';
import { type ListenerContext, notQueuedReason, notQueuedText } from '../context.js';
import { type DocsAgentRequest, parseDocsAgentCommand } from './parseDocsAgentCommand.js';

/**
 * The help, as it holds where the command was typed: a DM has no "this channel", and `status` there
 * lists your own jobs. (A payload without its usual fields has no channel: the channel's help.)
 */
const usageIn = (channel: string | undefined) =>
  channel !== undefined && isDirectMessage(channel) ? COMMAND_DM_USAGE : USAGE;
const empty = (channel: string | undefined) =>
  `Tell me what to change in the docs, for example \`/docs-agent Document the new --dry-run flag\`.\n\n${usageIn(channel)}`;
// Each stays as it is (Slack does not let a command's answer be replaced): true once all is done, too.
const STARTING = ':hourglass_flowing_sand: Starting a docs agent job: its card will appear here.';
const GATHERING = ':hourglass_flowing_sand: Gathering the docs digest of the last 7 days for this channel…';

/** The work a `/docs-agent` command asks for once it is acknowledged. */
type CommandWork = Extract<DocsAgentRequest, { kind: 'status' | 'digest' | 'instruction' }>;

/** What `/docs-agent` answers within Slack's 3 s, from the payload alone (no I/O), and the work that follows. */
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
      return { reply: ephemeral(empty(command.channel_id)), work: undefined };
    case 'help':
      return { reply: ephemeral(usageIn(command.channel_id)), work: undefined };
    case 'not_an_instruction': {
      // Slack escapes &, < and >: decoded before the cut, so the cut never splits an entity.
      const typed = escapeSlackText(truncate(decodeEntities(request.text), 100));
      const said = `I didn’t start a job for “${typed}”.`;
      const answer = request.stop
        ? `${NO_STOP_TEXT} ${said}`
        : request.meant
          ? `${said} Did you mean \`/docs-agent ${request.meant}\`?`
          : `${said} ${empty(command.channel_id)}`;
      return {
        reply: ephemeral(answer),
        work: undefined,
      };
    }
    case 'status':
      return { reply: undefined, work: request };
    case 'digest':
      return { reply: ephemeral(GATHERING), work: request };
    case 'instruction':
      return { reply: ephemeral(STARTING), work: request };
  }
}

/** The queued request for a command's work. */
function requestOf(
  work: CommandWork,
  command: Pick<SlashCommand, 'user_id' | 'channel_id' | 'response_url'>,
): SlackRequest {
  const where = { channel: command.channel_id, responseUrl: command.response_url };
  switch (work.kind) {
    case 'status':
      return { kind: 'command_status', user: command.user_id, ...where };
    case 'digest':
      return { kind: 'command_digest', ...where };
    case 'instruction':
      return { kind: 'command_start', text: work.text, user: command.user_id, ...where };
  }
}

type CommandArgs = SlackCommandMiddlewareArgs & AllMiddlewareArgs;

/** `/docs-agent`: answered from the payload, and its work queued before the answer goes back. */
export function docsAgentCommand(ctx: ListenerContext) {
  return async ({ command, ack, respond, logger }: CommandArgs): Promise<void> => {
    const { reply, work } = acknowledgeCommand(ctx.access, command);
    if (!work) return ack(reply);
    try {
      await ctx.enqueue(requestOf(work, command), command.trigger_id, { takeBackIfLate: true });
    } catch (error) {
      logger.error(`could not queue /docs-agent: ${notQueuedReason(error)}`);
      await ack({ response_type: 'ephemeral', text: notQueuedText(error) });
      return;
    }
    try {
      await ack(reply);
    } catch (error) {
      // Queued, and the ack lost (Socket Mode's socket closed under it, as Slack renews it every few
      // hours): Slack shows the command failed while its work runs. The person is told it runs after
      // all, or they would ask again and start it twice. (`status` answers through response_url anyway.)
      logger.warn(
        `the ack of a queued /docs-agent was lost (${String(error)}); its answer goes to response_url`,
      );
      if (reply) {
        ctx.track(
          respond(reply).then(
            () => {},
            (error: unknown) =>
              logger.warn(`could not answer a /docs-agent whose ack was lost: ${String(error)}`),
          ),
        );
      }
    }
  };
}

export function registerDocsAgentCommand(app: App, ctx: ListenerContext): void {
  app.command('/docs-agent', docsAgentCommand(ctx));
}
