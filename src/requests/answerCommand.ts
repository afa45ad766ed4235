import type { Logger, RespondArguments } from '@slack/bolt';
import { ALREADY_RUNNING_TEXT, digestRequestAnswer, rateLimitWaitText } from '../digest/digestAnswers.js';
import type { DigestContext } from '../digest/digestContext.js';
import { firstPromise } from '../digest/digestWaiters.js';
import { postDigestNow } from '../digest/postDigest.js';
import { failureWithInstruction, SOMETHING_WRONG } from '../jobs/doorAnswers.js';
import { budgetNote, cardInDmText } from '../jobs/jobAnswers.js';
import { followUnpostedInDm } from '../jobs/followInDm.js';
import { channelJobList, personJobList } from '../jobs/jobList.js';
import { isDirectMessage } from '../slack/conversations.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { startJob } from '../jobs/startJob.js';
import { decodeEntities } from '../slack/plainText.js';
import type { Respond } from '../slack/respond.js';
import type { SlackRequest } from './slackRequest.js';
import { isStoreUnavailable } from '../store/storeErrors.js';

type CommandRequest = Extract<SlackRequest, { kind: 'command_start' | 'command_status' | 'command_digest' }>;

/** `/docs-agent` once acknowledged: the work, then the answer through the command's response URL. */
export function answerCommand(
  request: CommandRequest,
  parts: {
    jobs: JobsContext;
    digest: DigestContext;
    respond: Respond;
    startId: string;
    /** When the command was queued (a digest run again finds the one its earlier run posted since). */
    askedAt?: Date;
  },
): Promise<void> {
  const { jobs, digest, respond } = parts;
  const { logger } = jobs;
  switch (request.kind) {
    case 'command_status':
      return answer(respond, logger, async () => {
        // In a DM (the bot's Messages tab), where no job's card is, the person's own jobs, as `status` said there.
        if (request.user && isDirectMessage(request.channel)) {
          const records = await jobs.records.recentForUser(request.user, 10);
          return { response_type: 'ephemeral', ...personJobList(records) };
        }
        const records = await jobs.records.recentInChannel(request.channel, 10);
        return { response_type: 'ephemeral', ...channelJobList(records) };
      });
    case 'command_digest':
      return answer(respond, logger, async () => {
        let promised = false;
        const outcome = await postDigestNow(digest, {
          channel: request.channel,
          ...(parts.askedAt ? { askedAt: parts.askedAt } : {}),
          // Told at once that it is on its way, before the request preparing it can say it will not come.
          waiter: {
            id: parts.startId,
            responseUrl: request.responseUrl,
            promise: async () => {
              promised = true;
              // Told already by an earlier run of this request (Redis failed as they were noted as waiting).
              if (!(await firstPromise(digest.store.atomic, parts.startId))) return;
              await respond({ response_type: 'ephemeral', text: ALREADY_RUNNING_TEXT }).catch(
                (error: unknown) => logger.warn(`could not answer /docs-agent digest: ${String(error)}`),
              );
            },
          },
          onLongWait: (waitMs) => {
            const text = rateLimitWaitText(waitMs, digest.now());
            void respond({ response_type: 'ephemeral', text }).catch((error: unknown) =>
              logger.warn(`could not answer /docs-agent digest: ${String(error)}`),
            );
          },
        });
        const text = digestRequestAnswer(outcome);
        if (text === undefined || (promised && text === ALREADY_RUNNING_TEXT)) return undefined;
        return { response_type: 'ephemeral', text };
      });
    case 'command_start': {
      // Slack escapes &, < and > in command text; the job gets the text as it was typed.
      const prompt = decodeEntities(request.text);
      return answer(
        respond,
        logger,
        async () => {
          const outcome = await startJob(
            jobs,
            {
              prompt,
              requestedBy: request.user,
              channel: request.channel,
              door: 'command',
            },
            parts.startId,
          );
          if (outcome.kind === 'failed') {
            return { response_type: 'ephemeral', text: failureWithInstruction(outcome.text, prompt) };
          }
          const note = budgetNote(outcome.budget);
          const withNote = (text: string) => (note ? `${text} ${note}` : text);
          if (outcome.kind === 'started') {
            // The card in the channel says the rest.
            return note ? { response_type: 'ephemeral', text: withNote('Job started.') } : undefined;
          }
          // Slack refused the card here (a channel the bot is not in, a DM between people, a channel
          // where posting is limited): as from the other doors, the job moves to the person's DM with
          // the bot. Slack only busy: the follower posts the card here shortly.
          const moved = await followUnpostedInDm(jobs, outcome);
          const said = cardInDmText(request.channel, outcome.reason === 'not_allowed');
          const text = moved ? withNote(said) : outcome.text;
          return { response_type: 'ephemeral', text };
        },
        prompt,
      );
    }
  }
}

/**
 * Runs the work, then answers the person with what it returns (nothing, when the acknowledgement
 * said it all); a failure of the work gets a plain answer instead. A failed answer (the response URL
 * refused it) is only logged: the work went through, and "something went wrong" would send the
 * person to do it again.
 *
 * Each answer is a new ephemeral message under the acknowledgement, never `replace_original` or
 * `delete_original`: those act on messages with buttons, and Slack does not apply them to a slash
 * command's own answer, which would leave the person with nothing.
 */
async function answer(
  respond: Respond,
  logger: Pick<Logger, 'error' | 'warn'>,
  work: () => Promise<RespondArguments | undefined>,
  /** A job's instruction, shown again if it could not be started. */
  instruction?: string,
): Promise<void> {
  let reply: RespondArguments | undefined;
  try {
    reply = await work();
  } catch (error) {
    if (isStoreUnavailable(error)) throw error; // the queue job waits for Redis, then resumes
    logger.error(`/docs-agent failed: ${String(error)}`);
    const text =
      instruction === undefined ? SOMETHING_WRONG : failureWithInstruction(SOMETHING_WRONG, instruction);
    reply = { response_type: 'ephemeral', text };
  }
  if (reply === undefined) return;
  await respond(reply).catch((error: unknown) => {
    logger.warn(`/docs-agent: could not answer the person through the response URL: ${String(error)}`);
  });
}
