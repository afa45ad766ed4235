/**
 * Removes the bot's own mentions from a message, so `@docs-agent document X` reads as
 * `document X`. Every door strips them the same way, so a reply delivered both as a message and
 * as a mention gives the job the same words.
 */
export function withoutBotMention(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text.trim();
  // Only the spaces around a mention go with it: the rest (a code sample's indentation) is kept.
  const mention = new RegExp(`[ \\t]*<@${botUserId}(?:\\|[^>]*)?>[ \\t]*`, 'g');
  return text
    .replace(mention, (found: string, at: number) => {
      const lineStart = at === 0 || text[at - 1] === '\n';
      const lineEnd = at + found.length === text.length || text[at + found.length] === '\n';
      return lineStart || lineEnd ? '' : ' ';
    })
    .trim();
}
