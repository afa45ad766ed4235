import { slackToPlainText, type UserNames } from '../slack/plainText.js';
import { permalinkOf } from '../slack/links.js';
import { readThread, readThreadMessage, type ThreadMessage, tsBefore } from '../slack/threadMessages.js';
import type { AgentBudget } from '../store/rateLedger.js';
import { followUnpostedInDm } from './followInDm.js';
import type { JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { ThreadStartingError } from './jobStarts.js';
import { postedDigest } from '../digest/digestMark.js';
import { evidenceLines } from '../digest/strugglesMessage.js';
import type { ChosenMessage } from './shortcutModal.js';
import { startJob } from './startJob.js';
import {
  type BotIdentity,
  contextSection,
  digestSection,
  filesNote,
  indentLines,
  NOT_AN_INSTRUCTION,
  oneLine,
  promptWithContext,
  threadSection,
  transcriptOf,
} from './threadContext.js';

export interface ShortcutRequest {
  user: string;
  instruction: string;
  includeThread: boolean;
  message: ChosenMessage;
  bot: BotIdentity;
}

export type ShortcutOutcome =
  | {
      kind: 'started';
      record: JobRecord;
      budget: AgentBudget;
      where: 'thread' | 'dm';
      /** The person asked for the thread, but Slack would not let it be read: the job has the message only. */
      threadLeftOut?: boolean;
    }
  /** The job started, but Slack took its card nowhere: `text` says so. */
  | { kind: 'unposted'; record: JobRecord; text: string }
  | { kind: 'failed'; text: string };

/**
 * "Send to docs agent" on a message: a job whose prompt is the instruction, then the message
 * (author, text, link), then its thread when asked. The card goes into the message's thread, or
 * into the person's DM when the bot cannot post there.
 */
export async function startFromShortcut(
  ctx: JobsContext,
  userNames: UserNames,
  request: ShortcutRequest,
  startId: string,
): Promise<ShortcutOutcome> {
  const { message } = request;
  const rootTs = message.threadTs ?? message.ts;
  // The card goes under the message, its thread then the job's; a card of its own in the channel, linking
  // the message, when a job has that thread already, or for a digest (an item of it, the digest itself or
  // a reply in its thread): people talk about the digest in its thread, and that talk is not for any one job.
  const jobThread = !message.struggle && (await ctx.records.byThread(message.channel, rootTs)) !== undefined;
  // The thread is held for the job now, before the message (and its thread) are read, so that a
  // reply written there meanwhile waits for the job rather than find none. startJob holds it on;
  // a digest's thread is given back below.
  const held = !message.struggle && !jobThread;
  if (held && !(await ctx.starts.claimThread(message.channel, rootTs, startId))) {
    throw new ThreadStartingError(message.channel, rootTs);
  }
  const { sections, threadLeftOut, permalink, readUpTo } = message.struggle
    ? {
        sections: [
          contextSection(
            'What readers struggled with, from the docs digest',
            evidenceLines(message.struggle),
          ),
        ],
        threadLeftOut: false,
        permalink: await permalinkOf(ctx.slack, ctx.logger, message),
        readUpTo: undefined,
      }
    : await messageSections(ctx, userNames, request, rootTs);
  const leftOut = threadLeftOut ? { threadLeftOut } : {};

  const digest = held ? await postedDigest(ctx.slack, message.channel, rootTs, ctx.botId) : undefined;
  const digestThread = digest !== undefined;
  const under = held && !digestThread;
  if (held && !under) {
    await ctx.starts.releaseThread(message.channel, rootTs, startId).catch(() => {}); // else it lapses
  }
  // Linked as the digest when it is the digest (or its item); a reply in its thread is a message.
  const fromDigest = message.struggle !== undefined || (digestThread && message.ts === rootTs);
  const outcome = await startJob(
    ctx,
    {
      prompt: promptWithContext(request.instruction, [
        ...sections,
        // The digest's words are in its blocks (its text is a notification's line), and the thread's
        // transcript leaves out the bot's own messages: "the third page here" means something.
        ...(digest
          ? [
              digestSection(
                (await slackToPlainText(digest.words, userNames)).trim(),
                message.ts === rootTs ? 'The docs digest that message is' : undefined,
              ),
            ]
          : []),
      ]),
      displayPrompt: request.instruction,
      requestedBy: request.user,
      channel: message.channel,
      ...(under ? { threadTs: rootTs } : {}),
      // The thread as read is the job's context: a reply written there meanwhile (which waits for the
      // job) is not sent to it again; one written after the read is.
      ...(under && readUpTo ? { contextBefore: readUpTo } : {}),
      about: {
        link: permalink,
        what: fromDigest ? 'digest' : 'message',
        channel: message.channel,
        ...(under ? { under: true } : {}),
      },
      door: 'shortcut',
    },
    startId,
  );
  switch (outcome.kind) {
    case 'failed':
      return { kind: 'failed', text: outcome.text };
    case 'started':
      return { kind: 'started', record: outcome.record, budget: outcome.budget, where: 'thread', ...leftOut };
    case 'unposted': {
      // Slack only busy, or the DM refused the card too: the person is told where the job stands.
      const moved = await followUnpostedInDm(ctx, outcome);
      return moved
        ? { kind: 'started', record: moved, budget: outcome.budget, where: 'dm', ...leftOut }
        : { kind: 'unposted', record: outcome.record, text: outcome.text };
    }
  }
}

/** What the transcript says in place of the chosen message, quoted whole in its own section. */
const QUOTED_ABOVE = '(the message this is about, quoted above)';

/** The message (and its thread, when asked) as the job's context. */
async function messageSections(
  ctx: JobsContext,
  userNames: UserNames,
  request: ShortcutRequest,
  rootTs: string,
): Promise<{
  sections: string[];
  threadLeftOut: boolean;
  permalink: string;
  /** The newest message of the thread as read, when it was: the job's context holds the thread up to it. */
  readUpTo: string | undefined;
}> {
  const { message } = request;
  // The message itself read alone (one request, whatever the thread's length), and whole: a thread's
  // read keeps only the start of each message. The whole thread only when asked for, read first, so
  // that a refusal of Slack's is told as the thread left out.
  const thread = request.includeThread
    ? await readThread(ctx.slack, message.channel, rootTs).catch(() => undefined)
    : undefined;
  const [full, permalink] = await Promise.all([
    readThreadMessage(ctx.slack, message.channel, rootTs, message.ts).catch(() => undefined),
    permalinkOf(ctx.slack, ctx.logger, message),
  ]);
  const sections = [await messageSection(userNames, message, full, permalink)];
  if (request.includeThread) {
    // The message is quoted in its own section: the transcript says where it is in the thread.
    const messages = thread?.messages.map((candidate) =>
      candidate.ts === message.ts ? { ...candidate, text: QUOTED_ABOVE, files: [] } : candidate,
    );
    const transcript =
      thread && messages
        ? await transcriptOf(messages, { bot: request.bot, userNames, cut: thread.cut })
        : undefined;
    sections.push(threadSection('The whole Slack thread it is in (oldest first)', transcript));
  }
  const readUpTo = thread?.messages.reduce<string | undefined>(
    (newest, { ts }) => (newest === undefined || tsBefore(newest, ts) ? ts : newest),
    undefined,
  );
  return { sections, threadLeftOut: request.includeThread && thread === undefined, permalink, readUpTo };
}

/** The message itself: from the thread when Slack let us read it (full text), else the form's copy. */
async function messageSection(
  userNames: UserNames,
  message: ChosenMessage,
  full: ThreadMessage | undefined,
  permalink: string,
): Promise<string> {
  const author = oneLine(
    message.author
      ? ((await userNames(message.author).catch(() => undefined)) ?? message.author)
      : (full?.bot_profile?.name ?? full?.username ?? 'a bot'),
  );
  const text = (await slackToPlainText(full?.text ?? message.text, userNames)).trim();
  const files = filesNote(full?.files ?? message.files.map((name) => ({ name })));
  return contextSection('The Slack message this is about', [
    NOT_AN_INSTRUCTION,
    `From: ${author}`,
    `Link: ${permalink}`,
    // Every line indented, so nothing in it can read as the end of this section.
    ...(text ? [`  ${indentLines(text)}`] : []),
    ...(files ? [files] : []),
  ]);
}
