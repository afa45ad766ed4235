import type { Logger, webApi } from '@slack/bolt';

/** URLs from elsewhere (Mintlify's pull request and preview links) as Slack can carry them. */

/** A URL a Slack button (or a `<url|label>` link) can carry: http(s), at most 3,000 characters. */
export function isLinkable(url: string | undefined | null): url is string {
  if (!url || url.length > 3_000) return false;
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/** The URL with the characters that end a `<url|label>` link percent-encoded, so Slack cannot misread it. */
export function linkTarget(url: string): string {
  return url.replace(/[<>|\s]/g, (character) => encodeURIComponent(character));
}

/**
 * The longest link target put inside `<url|label>` markup in a line of text. Lines hold a few such
 * links within Slack's 3,000 characters, so a line cut to that limit never cuts one in half.
 */
const TEXT_LINK_MAX = 1_000;

/** `<url|label>` when `url` is linkable and short enough for a line of text; undefined otherwise. */
export function textLink(url: string | undefined | null, label: string): string | undefined {
  if (!isLinkable(url)) return undefined;
  const target = linkTarget(url);
  return target.length <= TEXT_LINK_MAX ? `<${target}|${label}>` : undefined;
}

/** A Slack message's own link, as Slack's permalinks read (they open it in the workspace that has it). */
export function messageLink(channel: string, ts: string): string {
  return `https://slack.com/archives/${channel}/p${ts.replace('.', '')}`;
}

/** A message's permalink from Slack, or, when Slack will not give one, the link it would be. */
export async function permalinkOf(
  slack: Pick<webApi.WebClient, 'chat'>,
  logger: Logger,
  message: { channel: string; ts: string; threadTs?: string | undefined },
): Promise<string> {
  try {
    const answer = await slack.chat.getPermalink({ channel: message.channel, message_ts: message.ts });
    if (answer.permalink) return answer.permalink;
  } catch (error) {
    logger.debug(`no permalink for ${message.channel}/${message.ts}: ${String(error)}`);
  }
  // A reply's link names its thread, so that Slack opens the reply where it is.
  const link = messageLink(message.channel, message.ts);
  return message.threadTs ? `${link}?thread_ts=${message.threadTs}&cid=${message.channel}` : link;
}
