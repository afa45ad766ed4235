/**
 * Removes the bot's own mentions from a message, so `@docs-agent document X` reads as
 * `document X`. Every door strips them the same way, so a reply delivered both as a message and
 * as a mention gives the job the same words.
 */
export function withoutBotMention(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text.trim();
  const mention = new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g');
  return text
    .replace(mention, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
