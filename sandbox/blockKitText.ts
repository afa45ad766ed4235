import { emoji, type MarkupContext, markupToTerminal } from './slackMarkup.js';

/**
 * A message's (or a view's) Block Kit as terminal lines: headers bold, sections as text (fields one
 * a line), context dimmed, buttons as `[Open pull request → URL]`, dividers as a rule, a form's
 * inputs as their label over `[placeholder]` (or `[what the bot filled in]`) or `☐ option`. Without blocks, the message's text.
 * Blocks the bot never sends are named rather than guessed at.
 */

type Json = Record<string, unknown>;

export interface SlackMessageContent {
  text?: unknown;
  blocks?: unknown;
}

export function messageLines(message: SlackMessageContent, ctx: MarkupContext): string[] {
  const blocks = Array.isArray(message.blocks) ? (message.blocks as unknown[]) : [];
  if (blocks.length === 0) {
    return typeof message.text === 'string' ? markupToTerminal(message.text, ctx).split('\n') : [];
  }
  return blocks.flatMap((block) => blockLines(isObject(block) ? block : {}, ctx));
}

function blockLines(block: Json, ctx: MarkupContext): string[] {
  const { style } = ctx;
  switch (block.type) {
    case 'header':
      return [style.bold(textOf(block.text, ctx))];
    case 'section': {
      const lines = block.text === undefined ? [] : textOf(block.text, ctx).split('\n');
      const fields = Array.isArray(block.fields) ? block.fields : [];
      for (const field of fields) lines.push(textOf(field, ctx).split('\n').join('  '));
      if (isObject(block.accessory)) lines.push(...elementLines([block.accessory], ctx));
      return lines;
    }
    case 'context': {
      const elements = Array.isArray(block.elements) ? block.elements : [];
      const text = elements
        .map((element) =>
          isObject(element) && element.type === 'image' ? imageText(element) : textOf(element, ctx),
        )
        .join('  ');
      return text.split('\n').map((line) => style.dim(line));
    }
    case 'actions':
      return elementLines(Array.isArray(block.elements) ? block.elements : [], ctx);
    case 'divider':
      return [style.dim('─'.repeat(40))];
    case 'image':
      return [imageText(block)];
    case 'input': {
      const optional = block.optional === true ? ` ${style.dim('(optional)')}` : '';
      const element = isObject(block.element) ? inputText(block.element, ctx) : '';
      return [`${style.bold(textOf(block.label, ctx))}${optional}`, ...(element ? [element] : [])];
    }
    default:
      return [style.dim(`[${String(block.type)} block]`)];
  }
}

function elementLines(elements: unknown[], ctx: MarkupContext): string[] {
  const shown = elements.filter(isObject).map((element) => {
    if (element.type !== 'button') return `[${String(element.type)}]`;
    const label = textOf(element.text, ctx);
    return typeof element.url === 'string' ? `[${label} → ${element.url}]` : `[${label}]`;
  });
  return shown.length > 0 ? [shown.join(' ')] : [];
}

/** An input as a form shows it: a text box with what the bot filled in, else its placeholder; checkboxes unticked. */
function inputText(element: Json, ctx: MarkupContext): string {
  switch (element.type) {
    case 'plain_text_input':
      if (typeof element.initial_value === 'string' && element.initial_value !== '') {
        return `[${element.initial_value}]`;
      }
      return `[${ctx.style.dim(textOf(element.placeholder, ctx) || ' '.repeat(20))}]`;
    case 'checkboxes': {
      const options = Array.isArray(element.options) ? element.options : [];
      return options.map((option) => `☐ ${isObject(option) ? textOf(option.text, ctx) : ''}`).join('  ');
    }
    default:
      return `[${String(element.type)}]`;
  }
}

/** A text object: mrkdwn is rendered, plain_text shown as is (with its emoji). */
function textOf(value: unknown, ctx: MarkupContext): string {
  if (!isObject(value) || typeof value.text !== 'string') return '';
  return value.type === 'mrkdwn' ? markupToTerminal(value.text, ctx) : emoji(value.text);
}

function imageText(image: Json): string {
  return `[image${typeof image.alt_text === 'string' && image.alt_text ? `: ${image.alt_text}` : ''}]`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
