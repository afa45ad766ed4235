import type { Logger, webApi } from '@slack/bolt';
import { failureWithInstruction, SOMETHING_WRONG } from '../jobs/doorAnswers.js';
import { budgetNote } from '../jobs/jobAnswers.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { type ShortcutOutcome, startFromShortcut } from '../jobs/startFromShortcut.js';
import type { BotIdentity } from '../jobs/threadContext.js';
import type { UserNames } from '../slack/plainText.js';
import type { SlackRequest } from './slackRequest.js';
import { isStoreUnavailable } from '../store/storeErrors.js';
import { dropFixStarting, markFixStarting, noteFixOnDigest } from '../digest/fixNote.js';
import { firstSighting } from '../store/dedupe.js';
import { RENEWED_LEASE_MS, withRenewedLease } from '../store/lease.js';

/** How long a note waits for another on the same digest: a read and a write of Slack's, retries included. */
const NOTE_WAIT_MS = 60_000;
const THREAD_LEFT_OUT =
  'Slack would not let me read the message’s thread, so the job has the message only (add what matters from the thread in a reply to its card).';

/**
 * The submitted "Send to docs agent" form. The job is created after the form closed, because
 * creating it (a Mintlify POST that is never retried, then the card) cannot be bounded to 3 s, and
 * a timeout there could hide a job that did start. What goes wrong after that is told in the DM.
 */
export async function answerForm(
  request: Extract<SlackRequest, { kind: 'form_submission' }>,
  parts: {
    jobs: JobsContext;
    backgroundSlack: JobsContext['slack'];
    userNames: UserNames;
    bot: BotIdentity;
    startId: string;
    /** How long the note's hold of the digest lasts between renewals (default RENEWED_LEASE_MS). */
    fixNoteHoldMs?: number;
  },
): Promise<void> {
  const { jobs } = parts;
  const { user, instruction, includeThread, message } = request;
  const client = jobs.slack;
  // Submit clicked again before the form closed: Slack sends each submission with a trigger of its
  // own, so both are queued; the form's first starts the job, and the other does nothing (its person
  // hears from the first). One answered "try again shortly" and taken back never gets here.
  const viewKey = `form:${request.viewId}`;
  if (request.viewId && !(await firstSighting(jobs.store.atomic, viewKey, { by: parts.startId }))) return;
  // From a digest's button: while its job is being started (Mintlify's create can take seconds),
  // the next person to click the item is told so, before the job's note is on the digest.
  const item = message?.struggle
    ? { channel: message.channel, ts: message.ts, struggle: message.struggle }
    : undefined;
  const starting =
    item && (await markFixStarting(jobs.store.atomic, parts.userNames, item, parts.startId, user));
  const unmark = async () => {
    if (!item || starting === undefined) return;
    await dropFixStarting(jobs.store.atomic, item, starting).catch((error: unknown) =>
      // It lapses on its own within minutes.
      jobs.logger.warn(`could not clear the mark of a job starting from the digest: ${String(error)}`),
    );
  };
  try {
    const outcome = await startFromShortcut(
      jobs,
      parts.userNames,
      { user, instruction, includeThread, message, bot: parts.bot },
      parts.startId,
    );
    await tellPerson(client, jobs.logger, user, instruction, outcome);
    if (outcome.kind === 'failed') {
      await unmark();
    } else if (item && message) {
      // The item says on the digest that a job fixes it now: the mark has said its part. Not noted
      // (Slack refused, or the item is full), the mark still warns for its few minutes.
      const digest = { ...message, struggle: item.struggle };
      // One note at a time on a digest: each reads the digest as it is and writes it back with its
      // line added, so two at once would leave one line out. Not noted in time, the mark still warns.
      // The hold is renewed while Slack is slow (its calls retry for seconds), and lapses
      // within seconds with a process that died holding it.
      const noted = await withRenewedLease(
        jobs.store.atomic,
        `fix-note:${message.channel}:${message.ts}`,
        parts.fixNoteHoldMs ?? RENEWED_LEASE_MS,
        () => noteFixOnDigest(parts.backgroundSlack, jobs.logger, parts, digest, user),
        { waitMs: NOTE_WAIT_MS, logger: jobs.logger },
      );
      if (noted.ran && noted.value) await unmark();
    }
  } catch (error) {
    if (isStoreUnavailable(error)) throw error; // the queue job waits for Redis, then resumes
    jobs.logger.error(`a "Send to docs agent" job could not be started: ${String(error)}`);
    await unmark();
    await dm(client, jobs.logger, user, failureWithInstruction(SOMETHING_WRONG, instruction));
  }
}

async function tellPerson(
  client: webApi.WebClient,
  logger: Logger,
  user: string,
  instruction: string,
  outcome: ShortcutOutcome,
): Promise<void> {
  switch (outcome.kind) {
    case 'started': {
      const note = [outcome.threadLeftOut ? THREAD_LEFT_OUT : undefined, budgetNote(outcome.budget)]
        .filter((part) => part !== undefined)
        .join(' ');
      const { channel, threadTs, cardTs } = outcome.record;
      if (note && threadTs) {
        // Beside the card: in the thread it is a reply in, else in the conversation (Slack shows an
        // ephemeral under a message with no replies to nobody).
        const inThread = cardTs !== threadTs;
        await client.chat
          .postEphemeral({ channel, user, text: note, ...(inThread ? { thread_ts: threadTs } : {}) })
          .catch((error: unknown) => logger.warn(`could not tell ${user} about their job: ${String(error)}`));
      }
      return;
    }
    case 'unposted':
      return dm(client, logger, user, outcome.text);
    case 'failed':
      return dm(client, logger, user, failureWithInstruction(outcome.text, instruction));
  }
}

/** The form is closed by now: the person's DM with the bot is where the answer cannot get lost. */
async function dm(client: webApi.WebClient, logger: Logger, user: string, text: string): Promise<void> {
  await client.chat.postMessage({ channel: user, text, unfurl_links: false }).catch((error: unknown) => {
    logger.error(`could not tell ${user} in a DM that their job did not start: ${String(error)}`);
  });
}
