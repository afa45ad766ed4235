import type { types, ViewOutput } from '@slack/bolt';
import { z } from 'zod';
import { cutAt, escapeSlackText, quote, truncate } from '../slack/escape.js';
import { slackToPlainText } from '../slack/plainText.js';
import { messageText } from '../slack/messageText.js';
import { evidenceText, listOf, type StruggleValue, struggleValueSchema } from '../digest/strugglesMessage.js';
import { filesNote } from './threadContext.js';

/** The message shortcut's callback_id: the same string is declared in manifest.yml. */
export const SEND_TO_AGENT_SHORTCUT = 'send_to_docs_agent';
/** The form it opens. */
export const SEND_TO_AGENT_FORM = 'send_to_docs_agent_form';
export const INSTRUCTION_BLOCK = 'instruction';
const INSTRUCTION_ACTION = 'instruction_input';
const THREAD_BLOCK = 'thread';
const THREAD_ACTION = 'include_thread';

/** Slack's limit on a view's private_metadata. */
const METADATA_MAX = 3_000;
const PREVIEW_MAX = 2_500;
/** The files of a message the form names, and how long each name may be. */
const FILES_MAX = 20;
const FILE_NAME_MAX = 100;
/** Slack's limit on a section's text. */
const SECTION_TEXT_MAX = 3_000;

/** The message the shortcut was used on, as the form carries it to the submission. */
const chosenMessageSchema = z.object({
  channel: z.string(),
  ts: z.string(),
  /** The root of the thread the message is in, when it is in one. */
  threadTs: z.string().optional(),
  /** The author's user id; bots have none. */
  author: z.string().optional(),
  /** Slack markup, cut to fit the form: the submission reads the full text again when it can. */
  text: z.string(),
  files: z.array(z.string()),
  /** From a digest's "Fix with the docs agent": what readers struggled with, the job's evidence. */
  struggle: struggleValueSchema.optional(),
});
export type ChosenMessage = z.infer<typeof chosenMessageSchema>;

/** What the shortcut payload says about the message (`message` of a message_action). */
export function chosenMessage(
  channel: string,
  message: {
    ts: string;
    user?: string;
    text?: string;
    blocks?: unknown;
    attachments?: unknown;
    thread_ts?: string;
    files?: unknown;
  },
): ChosenMessage {
  const files = Array.isArray(message.files)
    ? (message.files as Array<{ name?: string; title?: string }>)
    : [];
  return {
    channel,
    ts: message.ts,
    ...(message.thread_ts ? { threadTs: message.thread_ts } : {}),
    ...(message.user ? { author: message.user } : {}),
    // An app's words may be in its blocks or attachments alone.
    text: messageText(message),
    // Named to the agent, never fetched: a few names, not too long, keep the form's metadata small.
    files: files
      .map((file) => truncate(file.name || file.title || '', FILE_NAME_MAX))
      .filter(Boolean)
      .slice(0, FILES_MAX),
  };
}

/** Marks a person's id in the quoted text, where it becomes a Slack mention again. */
const MENTION = '\uE000';
const MENTIONED = /@\uE000(U[A-Z0-9]+|W[A-Z0-9]+)\uE000/g;

/**
 * The form: the instruction, the message quoted read-only, and the thread checkbox when it has a
 * thread. From a digest's button, the instruction comes filled in and the evidence replaces the message.
 */
export async function sendToAgentModal(
  message: ChosenMessage,
  /**
   * `fixedBy`: who the digest's item says started a job for it already; `startingBy`: who is
   * starting one for it now, not yet noted on the digest.
   */
  options: { instruction?: string; fixedBy?: string[]; startingBy?: string[] } = {},
): Promise<types.ModalView> {
  if (message.struggle) {
    const blocks = evidenceBlocks(message.struggle, options.fixedBy ?? [], options.startingBy ?? []);
    return modalView(message, blocks, options.instruction);
  }
  // No users.info here (the form must open within Slack's 3 s): people mentioned are shown as
  // Slack's own mentions, which a form renders as names and which notify nobody. Nothing else in
  // the message can render as a mention or a link.
  const plain = await slackToPlainText(message.text, async (id) => `${MENTION}${id}${MENTION}`);
  const files = filesNote(message.files.map((name) => ({ name })));
  const sectionText = (previewMax: number) => {
    const quoted = escapeSlackText(truncate(plain, previewMax))
      .replace(MENTIONED, (_all, id: string) => `<@${id}>`)
      .replaceAll(MENTION, ''); // a mention cut short by the truncation
    const shown = [plain.trim() ? quote(quoted) : '>_(no text)_'];
    if (files) shown.push(escapeSlackText(files));
    return `*The message*${message.author ? ` from <@${message.author}>` : ''}\n${shown.join('\n')}`;
  };
  // Escaping and quoting make the text longer (a line of code, `<` by `<`): the longest preview that fits.
  let text = sectionText(PREVIEW_MAX);
  if (text.length > SECTION_TEXT_MAX) {
    let [fits, tooLong] = [0, PREVIEW_MAX];
    while (tooLong - fits > 1) {
      const middle = Math.floor((fits + tooLong) / 2);
      if (sectionText(middle).length <= SECTION_TEXT_MAX) fits = middle;
      else tooLong = middle;
    }
    text = truncate(sectionText(fits), SECTION_TEXT_MAX); // the files line alone could still be too long
  }
  const blocks: types.KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (message.threadTs) {
    blocks.push({
      type: 'input',
      block_id: THREAD_BLOCK,
      optional: true,
      label: { type: 'plain_text', text: 'Context' },
      element: {
        type: 'checkboxes',
        action_id: THREAD_ACTION,
        options: [{ text: { type: 'plain_text', text: 'Include the whole thread' }, value: 'thread' }],
      },
    });
  }
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: 'I post the job’s card in this message’s thread, unless that thread is a job’s already or the docs digest’s (then in the channel, linking the message) or I’m not in this channel (then in our DM). Replies under the card steer the job.',
      },
    ],
  });
  return modalView(message, blocks);
}

/** The evidence from a digest, in plain text: readers' words never render as mentions or links. */
function evidenceBlocks(
  struggle: StruggleValue,
  fixedBy: string[],
  startingBy: string[],
): types.KnownBlock[] {
  const warning = takenWarning(fixedBy, startingBy);
  const taken: types.KnownBlock[] =
    warning === undefined
      ? []
      : [{ type: 'section', text: { type: 'plain_text', text: warning, emoji: true } }];
  return [
    ...taken,
    {
      type: 'section',
      text: { type: 'mrkdwn', text: '*What readers struggled with* (from the docs digest)' },
    },
    { type: 'section', text: { type: 'plain_text', text: evidenceText(struggle), emoji: false } },
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: 'The job gets this as evidence, with your instruction. Its card is posted in this channel, linking the digest, and replies under the card steer the job; the digest’s own thread stays for talk.',
        },
      ],
    },
  ];
}

/** Who started a job for the item, or is starting one now: said before a second job is started. */
function takenWarning(fixedBy: string[], startingBy: string[]): string | undefined {
  const starting = (names: string[]) =>
    `${listOf(names, 'and')} ${names.length === 1 ? 'is' : 'are'} starting`;
  if (startingBy.length === 0) {
    if (fixedBy.length === 0) return undefined;
    return `⚠️ ${listOf(fixedBy, 'and')} already started a job for this. Start another only for what that job leaves out.`;
  }
  if (fixedBy.length === 0) {
    const left = startingBy.length === 1 ? 'that job leaves' : 'those jobs leave';
    return `⚠️ ${starting(startingBy)} a job for this right now. Start another only for what ${left} out.`;
  }
  return `⚠️ ${listOf(fixedBy, 'and')} already started a job for this, and ${starting(startingBy)} one right now. Start another only for what those jobs leave out.`;
}

function modalView(
  message: ChosenMessage,
  blocks: types.KnownBlock[],
  instruction?: string,
): types.ModalView {
  const input: types.KnownBlock = {
    type: 'input',
    block_id: INSTRUCTION_BLOCK,
    label: { type: 'plain_text', text: 'What should the agent change in the docs?' },
    element: {
      type: 'plain_text_input',
      action_id: INSTRUCTION_ACTION,
      multiline: true,
      max_length: 3_000,
      ...(instruction ? { initial_value: cutAt(instruction, 3_000) } : {}),
      placeholder: { type: 'plain_text', text: 'For example: document the behaviour described here' },
    },
  };
  return {
    type: 'modal',
    callback_id: SEND_TO_AGENT_FORM,
    title: { type: 'plain_text', text: 'Send to docs agent' },
    submit: { type: 'plain_text', text: 'Start job' },
    close: { type: 'plain_text', text: 'Cancel' },
    private_metadata: metadataOf(message),
    blocks: [input, ...blocks],
  };
}

/**
 * The message as metadata, fit to Slack's limit: its last file names dropped first (names full of
 * quotes double in JSON), then its text cut. The submission reads both again when it can, and falls
 * back on these when it cannot, where the words matter more than the names.
 */
function metadataOf(message: ChosenMessage): string {
  let { text, files } = message;
  for (;;) {
    const metadata = JSON.stringify({ ...message, text, files });
    if (metadata.length <= METADATA_MAX) return metadata;
    if (files.length > 0) files = files.slice(0, -1);
    else if (text !== '') text = cutAt(text, Math.floor(text.length * 0.8));
    else return metadata;
  }
}

export interface Submission {
  instruction: string;
  includeThread: boolean;
  /** Undefined when the metadata is not ours (a form from an older version of the bot, say). */
  message: ChosenMessage | undefined;
}

export function readSubmission(view: ViewOutput): Submission {
  const values = view.state.values;
  const instruction = values[INSTRUCTION_BLOCK]?.[INSTRUCTION_ACTION]?.value ?? '';
  const includeThread = (values[THREAD_BLOCK]?.[THREAD_ACTION]?.selected_options ?? []).length > 0;
  let message: ChosenMessage | undefined;
  try {
    const parsed = chosenMessageSchema.safeParse(JSON.parse(view.private_metadata));
    message = parsed.success ? parsed.data : undefined;
  } catch {
    message = undefined;
  }
  return { instruction: instruction.trim(), includeThread, message };
}
