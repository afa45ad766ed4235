import { isDirectMessage } from '../slack/conversations.js';
import type { Config } from '../config.js';

/**
 * The optional allowlists (ALLOWED_USER_IDS, ALLOWED_CHANNEL_IDS). Returns the polite refusal
 * to show the person, or undefined when they may use the bot here.
 */
export function accessRefusal(access: Config['access'], user: string, channel: string): string | undefined {
  const person = personRefusal(access, user);
  if (person) return person;
  if (access.channelIds && !isDirectMessage(channel) && !access.channelIds.has(channel)) {
    return 'Sorry, the docs agent isn’t enabled in this channel. Ask the person who installed it, or use it in a channel where it is.';
  }
  return undefined;
}

/** ALLOWED_USER_IDS alone: the refusal for someone it leaves out, wherever they are (the Home tab too). */
export function personRefusal(access: Config['access'], user: string): string | undefined {
  return access.userIds && !access.userIds.has(user)
    ? 'Sorry, the docs agent is only available to some people in this workspace. Ask the person who installed it to add you.'
    : undefined;
}
