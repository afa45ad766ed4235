/** What a Slack Web API error code means for the bot. */
export type SlackRefusal =
  'not_in_channel' | 'channel_gone' | 'message_gone' | 'rate_limited' | 'auth' | 'missing_scope' | 'other';

/** The Slack error code of a failed Web API call, if it has one (`not_in_channel`, ...). */
export function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  if (typeof data?.error === 'string') return data.error;
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'slack_webapi_rate_limited_error' ? 'ratelimited' : undefined;
}

export function classifySlackError(error: unknown): SlackRefusal {
  switch (slackErrorCode(error)) {
    case 'not_in_channel':
      return 'not_in_channel';
    case 'channel_not_found':
    case 'is_archived':
    case 'channel_is_archived':
    case 'restricted_action': // posting there is not allowed (announcement-only, read-only), nor will it be
    case 'restricted_action_read_only_channel':
    case 'team_access_not_granted':
      return 'channel_gone';
    case 'message_not_found':
    case 'cant_update_message':
      return 'message_gone';
    case 'ratelimited':
    case 'rate_limited':
      return 'rate_limited';
    case 'invalid_auth':
    case 'not_authed':
    case 'account_inactive':
    case 'token_revoked':
    case 'token_expired':
      return 'auth';
    case 'missing_scope':
      return 'missing_scope';
    default:
      return 'other';
  }
}

/**
 * Slack will not let the bot post in the channel, though it may well be a member: posting there is
 * limited (an announcement-only or read-only channel), the channel is archived, or the app is not
 * granted in its workspace. Not `not_in_channel` nor `channel_not_found` (a private channel the bot
 * is not in, a DM between people), where inviting the bot is the way.
 */
export function postingNotAllowed(error: unknown): boolean {
  const code = slackErrorCode(error);
  return classifySlackError(error) === 'channel_gone' && code !== 'channel_not_found';
}

/** Why a channel refused a job's card for good, as the job's record keeps it (JobRecord.cardRefused). */
export function cardRefusalReason(error: unknown): 'not_in_channel' | 'not_allowed' | 'other' {
  if (classifySlackError(error) === 'not_in_channel') return 'not_in_channel';
  return postingNotAllowed(error) ? 'not_allowed' : 'other';
}

/**
 * Slack's answers to a reply the thread will not take, while the channel still takes messages: the
 * parent was deleted (a tombstone), an admin locked the thread, the channel has no threads.
 */
const THREAD_TAKES_NO_REPLY = new Set([
  'thread_not_found',
  'cannot_reply_to_message',
  'restricted_action_thread_locked',
  'restricted_action_non_threadable_channel',
]);

/** Slack refused a reply because of the thread (or its message, gone), not the channel. */
export function threadTakesNoReply(error: unknown): boolean {
  return (
    THREAD_TAKES_NO_REPLY.has(slackErrorCode(error) ?? '') || classifySlackError(error) === 'message_gone'
  );
}

// Slack's words for trouble on its side. Failures that are no answer from Slack at all (an HTTP
// 5xx, a cut connection, a rate limit outlasting the WebClient's retries) pass as well.
const PASSING_CODES = new Set([
  'ratelimited',
  'rate_limited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/**
 * True when Slack surely did not act on the call: it was rate limited, or said it was unavailable.
 * Unlike `internal_error` or `fatal_error` ("some aspect of the operation may have succeeded"), or a
 * connection lost after sending, asking again cannot do it twice.
 */
export function surelyNotDone(error: unknown): boolean {
  const kind = (error as { code?: unknown } | undefined)?.code;
  if (kind === 'slack_webapi_rate_limited_error') return true;
  if (kind !== 'slack_webapi_platform_error') return false;
  return ['ratelimited', 'rate_limited', 'service_unavailable'].includes(slackErrorCode(error) ?? '');
}

/** True when the same call may well succeed later: Slack was busy or out of reach rather than refusing. */
export function isPassingSlackFailure(error: unknown): boolean {
  const kind = (error as { code?: unknown } | undefined)?.code;
  if (kind !== 'slack_webapi_platform_error') return true;
  return PASSING_CODES.has(slackErrorCode(error) ?? '');
}
