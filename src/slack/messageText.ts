import { escapeSlackText } from './escape.js';

/**
 * A message's words, as Slack shows them. A person's are the text (a message forwarded with it read
 * after it). Apps (alerts, CI, other bots) often post the words in blocks or legacy attachments, the
 * text then only the notification's line (or empty): their header, section and context blocks are
 * read instead of the text when they say something, and their attachments after, in the order Slack
 * shows them. The result is Slack markup, as `text` is (slackToPlainText reads it).
 */
export function messageText(message: {
  text?: string;
  bot_id?: string;
  blocks?: unknown;
  attachments?: unknown;
}): string {
  const text = message.text?.trim() ? message.text : undefined;
  // A message forwarded with a comment: the comment is the text, the message forwarded an attachment.
  if (text !== undefined && !message.bot_id) return [text, ...forwardedLines(message.attachments)].join('\n');
  const laidOut = list(message.blocks).some(
    (block) => isObject(block) && LAID_OUT.has(String(block.type)) && blockLines([block]).length > 0,
  );
  const words = laidOut || text === undefined ? blockLines(message.blocks) : [text];
  // An attachment whose only words are its fallback often repeats the text: said once.
  const attached = attachmentLines(message.attachments).filter((line) => line !== text);
  return [...words, ...attached].join('\n');
}

/** Blocks an app lays its words out in, which Slack shows in place of the text. */
const LAID_OUT = new Set(['header', 'section', 'context']);

/**
 * The messages forwarded (shared) with a message, as Slack markup, each said to be one and whose it
 * is: Slack keeps them as attachments marked `is_share` (a link to a message unfurled is not one).
 * Empty when nothing was forwarded.
 */
export function forwardedText(attachments: unknown): string {
  return forwardedLines(attachments).join('\n');
}

const isForwarded = (attachment: unknown): attachment is Json =>
  isObject(attachment) && attachment.is_share === true;

function forwardedLines(attachments: unknown): string[] {
  return list(attachments).filter(isForwarded).flatMap(sharedAttachmentLines);
}

function sharedAttachmentLines(attachment: Json): string[] {
  const words = ownAttachmentLines(attachment);
  if (words.length === 0) return [];
  // The author's id is read as a name where names are known; else the name Slack showed.
  const author =
    typeof attachment.author_id === 'string' && /^[UW][A-Z0-9]+$/.test(attachment.author_id)
      ? `<@${attachment.author_id}>`
      : typeof attachment.author_name === 'string' && attachment.author_name.trim()
        ? escapeSlackText(attachment.author_name.trim())
        : undefined;
  return [`Forwarded message${author ? ` from ${author}` : ''}:`, ...words];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const textOf = (value: unknown): string[] =>
  isObject(value) && typeof value.text === 'string' && value.text.trim() ? [value.text] : [];

function blockLines(blocks: unknown): string[] {
  return list(blocks).flatMap((block): string[] => {
    if (!isObject(block)) return [];
    switch (block.type) {
      case 'header':
      case 'section':
        return [...textOf(block.text), ...list(block.fields).flatMap(textOf)];
      case 'context':
        return [list(block.elements).flatMap(textOf).join('  ')].filter(Boolean);
      case 'markdown':
        return typeof block.text === 'string' && block.text.trim() ? [block.text] : [];
      case 'rich_text':
        return list(block.elements).map(richTextLine).filter(Boolean);
      default:
        return [];
    }
  });
}

/** A rich text section, list, quote or preformatted block, as Slack markup. */
function richTextLine(element: unknown): string {
  if (!isObject(element)) return '';
  if (element.type === 'rich_text_list')
    return list(element.elements)
      .map((item) => `• ${richTextLine(item)}`)
      .join('\n');
  return list(element.elements)
    .map((part): string => {
      if (!isObject(part)) return '';
      switch (part.type) {
        case 'text':
          return typeof part.text === 'string' ? part.text : '';
        case 'link':
          return typeof part.url === 'string'
            ? typeof part.text === 'string'
              ? `<${part.url}|${part.text}>`
              : `<${part.url}>`
            : '';
        case 'user':
          return typeof part.user_id === 'string' ? `<@${part.user_id}>` : '';
        case 'channel':
          return typeof part.channel_id === 'string' ? `<#${part.channel_id}>` : '';
        case 'emoji':
          return typeof part.name === 'string' ? `:${part.name}:` : '';
        default:
          return '';
      }
    })
    .join('');
}

function attachmentLines(attachments: unknown): string[] {
  return list(attachments).flatMap((attachment): string[] => {
    if (!isObject(attachment)) return [];
    return isForwarded(attachment) ? sharedAttachmentLines(attachment) : ownAttachmentLines(attachment);
  });
}

/** An attachment's words: its own parts, or its fallback when it has none. */
function ownAttachmentLines(attachment: Json): string[] {
  const parts = ['pretext', 'title', 'text']
    .map((key) => attachment[key])
    .filter((value): value is string => typeof value === 'string' && value.trim() !== '');
  const fields = list(attachment.fields).flatMap((field) =>
    isObject(field) && typeof field.value === 'string'
      ? [`${typeof field.title === 'string' ? `${field.title}: ` : ''}${field.value}`]
      : [],
  );
  const own = [...parts, ...fields, ...blockLines(attachment.blocks)];
  return own.length > 0 ? own : typeof attachment.fallback === 'string' ? [attachment.fallback] : [];
}
