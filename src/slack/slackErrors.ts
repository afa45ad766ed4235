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
