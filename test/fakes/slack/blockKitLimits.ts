/**
 * The Block Kit limits Slack enforces on the server, worded like Slack's own `invalid_blocks`
 * messages ("must be less than 3001 characters [json-pointer:/blocks/0/text/text]").
 * Only enforced limits live here (documented ones, and the one cap on a whole message that Slack
 * does not document), so a message the fake accepts is one Slack accepts.
 */

type Json = Record<string, unknown>;

export const messageBlockLimit = 50;
/**
 * Slack also refuses a message whose blocks' text adds up past a cap it does not publish, with
 * `msg_blocks_too_long`. Reported: "12,000 text characters with a buffer for block containers" (a
 * Slack engineer, slackapi/bolt-js#2509); 11,341 refused and 9,597 in 50 blocks taken (#2867). The
 * fake refuses from here: between the largest message taken and the smallest refused on record.
 */
export const messageBlocksTextLimit = 11_000;

/** Every `text` string in the blocks, added up, as the reports above counted them. */
export function blocksText(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + blocksText(item), 0);
  if (!isObject(value)) return 0;
  return Object.entries(value).reduce(
    (sum, [key, inner]) =>
      sum + (key === 'text' && typeof inner === 'string' ? inner.length : blocksText(inner)),
    0,
  );
}
export const modalAndHomeBlockLimit = 100;

const otherKnownBlocks = new Set(['divider', 'rich_text', 'video', 'file', 'table', 'context_actions']);

export function blockProblems(blocks: unknown, at: string, maxBlocks: number): string[] {
  if (!Array.isArray(blocks)) return [`must be an array [json-pointer:${at}]`];
  const problems: string[] = [];
  if (blocks.length > maxBlocks)
    problems.push(`no more than ${maxBlocks} items allowed [json-pointer:${at}]`);
  blocks.forEach((block, i) => {
    problems.push(...blockProblemsAt(block, `${at}/${i}`));
  });
  return problems;
}

function blockProblemsAt(block: unknown, at: string): string[] {
  if (!isObject(block)) return [`must provide an object [json-pointer:${at}]`];
  const problems = maxLength(block.block_id, 255, `${at}/block_id`);
  switch (block.type) {
    case 'section':
      return [...problems, ...sectionProblems(block, at)];
    case 'header':
      return [...problems, ...textProblems(block.text, 150, `${at}/text`, { plainOnly: true })];
    case 'context':
      return [...problems, ...listProblems(block.elements, 10, `${at}/elements`, contextElementProblems)];
    case 'actions':
      return [...problems, ...listProblems(block.elements, 25, `${at}/elements`, elementProblems)];
    case 'markdown':
      return [...problems, ...stringProblems(block.text, 12_000, `${at}/text`)];
    case 'image':
      return [...problems, ...stringProblems(block.alt_text, 2000, `${at}/alt_text`)];
    case 'input':
      return [
        ...problems,
        ...textProblems(block.label, 2000, `${at}/label`, { plainOnly: true }),
        ...(block.element === undefined ? [`missing required field: element [json-pointer:${at}]`] : []),
      ];
    default:
      if (typeof block.type === 'string' && otherKnownBlocks.has(block.type)) return problems;
      return [...problems, `failed to match all allowed schemas [json-pointer:${at}]`];
  }
}

function sectionProblems(block: Json, at: string): string[] {
  if (block.text === undefined && block.fields === undefined) {
    return [`must provide either text or fields [json-pointer:${at}]`];
  }
  const problems: string[] = [];
  if (block.text !== undefined) problems.push(...textProblems(block.text, 3000, `${at}/text`));
  if (block.fields !== undefined) {
    problems.push(
      ...listProblems(block.fields, 10, `${at}/fields`, (field, fieldAt) =>
        textProblems(field, 2000, fieldAt),
      ),
    );
  }
  if (block.accessory !== undefined) problems.push(...elementProblems(block.accessory, `${at}/accessory`));
  return problems;
}

function contextElementProblems(element: unknown, at: string): string[] {
  if (isObject(element) && element.type === 'image')
    return stringProblems(element.alt_text, 2000, `${at}/alt_text`);
  return textProblems(element, 3000, at);
}

function elementProblems(element: unknown, at: string): string[] {
  if (!isObject(element)) return [`must provide an object [json-pointer:${at}]`];
  const problems = maxLength(element.action_id, 255, `${at}/action_id`);
  if (element.type !== 'button') return problems;
  return [
    ...problems,
    ...textProblems(element.text, 75, `${at}/text`, { plainOnly: true }),
    ...maxLength(element.value, 2000, `${at}/value`),
    ...maxLength(element.url, 3000, `${at}/url`),
  ];
}

/** A text object: `{ type: 'plain_text' | 'mrkdwn', text }`, text 1..max characters. */
export function textProblems(
  text: unknown,
  max: number,
  at: string,
  opts: { plainOnly?: boolean } = {},
): string[] {
  if (!isObject(text)) return [`must provide an object [json-pointer:${at}]`];
  const allowed = opts.plainOnly ? ['plain_text'] : ['plain_text', 'mrkdwn'];
  if (typeof text.type !== 'string' || !allowed.includes(text.type)) {
    return [`must be one of ${allowed.join(', ')} [json-pointer:${at}/type]`];
  }
  return stringProblems(text.text, max, `${at}/text`);
}

function listProblems(
  list: unknown,
  max: number,
  at: string,
  itemProblems: (item: unknown, itemAt: string) => string[],
): string[] {
  if (!Array.isArray(list) || list.length === 0)
    return [`must provide a non-empty array [json-pointer:${at}]`];
  const problems = list.length > max ? [`no more than ${max} items allowed [json-pointer:${at}]`] : [];
  list.forEach((item, i) => {
    problems.push(...itemProblems(item, `${at}/${i}`));
  });
  return problems;
}

function stringProblems(value: unknown, max: number, at: string): string[] {
  if (typeof value !== 'string') return [`must be a string [json-pointer:${at}]`];
  if (value.length === 0) return [`must be more than 0 characters [json-pointer:${at}]`];
  return maxLength(value, max, at);
}

function maxLength(value: unknown, max: number, at: string): string[] {
  return typeof value === 'string' && value.length > max
    ? [`must be less than ${max + 1} characters [json-pointer:${at}]`]
    : [];
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
