import type { webApi } from '@slack/bolt';

/** To the author of a mention or DM that never reached the queue, after Slack's last delivery of it. */
export const MESSAGE_LOST =
  'Sorry, I couldn’t take your message: my storage was unavailable for several minutes, so nothing was started. Please send it again.';

/** To the author of a reply under the bot's message that never reached the queue. */
export const REPLY_LOST =
  'Sorry, I couldn’t take your reply: my storage was unavailable for several minutes, so the agent did not get it. Please send it again.';

/**
 * Tells the author their message was lost, where they wrote it: in the bot's DM a message that
 * stays (as its other answers there), in a channel one for them alone. An ephemeral in a thread
 * needs the thread to exist, which it does for a reply or a mention written in one.
 */
export function tellLost(
  client: webApi.WebClient,
  place: { channel: string; user: string; threadTs?: string | undefined; dm: boolean },
  text: string,
): () => Promise<unknown> {
  const thread = place.threadTs === undefined ? {} : { thread_ts: place.threadTs };
  return () =>
    place.dm
      ? client.chat.postMessage({ channel: place.channel, text, ...thread })
      : client.chat.postEphemeral({ channel: place.channel, user: place.user, text, ...thread });
}
