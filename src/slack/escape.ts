/**
 * Escapes text a person typed before the bot echoes it in a message, so `<!channel>`,
 * `<@U123>` or `<https://x|y>` inside it show as typed and can never ping or disguise a link, nor
 * (its bidi controls dropped) turn the words after it around.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(BIDI_CONTROLS, '');
}

/** Bidi overrides and isolates: left open, they would turn the bot's own words after them around. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/** Text a person wrote, for a plain_text field of the bot's (where Slack reads no markup): its bidi controls dropped. */
export function withoutBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/** Shortens text to `max` characters on a word boundary when it can, with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return max === 1 ? '…' : '';
  const cut = cutAt(text, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

/**
 * The first `max` characters (UTF-16 units, as Slack's limits count them) of `text`, one fewer when
 * the cut would split an emoji or another character of two units in half.
 */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** Quotes multi-line text as a Slack block quote. */
export function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => `>${line}`)
    .join('\n');
}

/** A Slack date token: shown in each reader's own time zone, with a plain fallback. */
export function slackDate(at: Date, format = '{date_short_pretty} at {time}'): string {
  return `<!date^${Math.floor(at.getTime() / 1000)}^${format}|${at.toISOString().replace(/\.\d+Z$/, 'Z')}>`;
}
