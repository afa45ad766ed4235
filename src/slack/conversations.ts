/**
 * A direct message (Slack's conversation ids that start with D): the bot's DM with a person, or a
 * DM between people. It has no name to show, no allowlist applies to it, and no mention event
 * comes from it.
 */
export function isDirectMessage(channel: string): boolean {
  return channel.startsWith('D');
}
