/**
 * Slack refuses a message whose blocks' text adds up past a cap it does not publish
 * (`msg_blocks_too_long`), even when every block is within its own limits. A Slack engineer put it
 * at about 12,000 characters of text "with a buffer for block containers"; a message of 11,341 was
 * seen refused, and one of 9,597 in 50 blocks taken (slackapi/bolt-js issues 2509 and 2867).
 */
export const MESSAGE_BLOCKS_TEXT_MAX = 9_000;

/** Every `text` string in the blocks, added up: what Slack's cap on a message's blocks counts. */
export function blocksTextLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + blocksTextLength(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  let sum = 0;
  for (const [key, inner] of Object.entries(value)) {
    sum += key === 'text' && typeof inner === 'string' ? inner.length : blocksTextLength(inner);
  }
  return sum;
}
