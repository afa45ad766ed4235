import type { Logger, webApi } from '@slack/bolt';
import { withoutCredentials } from '../log.js';

/** The bot's own ids in the workspace, from `auth.test` at start (and `bots.info`, for its app, just after). */
export interface SlackIdentity {
  botUserId: string;
  botId: string;
  /** The app the token is for; unknown until Slack says (shortly after the start), or when it would not. */
  appId?: string;
}

/**
 * The bot scopes the bot uses: the same list as manifest.yml's `oauth_config.scopes.bot`
 * (test/slackIdentity.test.ts holds them equal).
 */
export const BOT_SCOPES: readonly string[] = [
  'commands',
  'chat:write',
  'channels:history',
  'groups:history',
  'reactions:write',
  'users:read',
  'app_mentions:read',
  'im:history',
];

/**
 * A wrong token fails at start with a clear line, not on the first request; the bot's ids come with
 * it. A token installed from an older manifest is told at start too, by the scopes it lacks.
 */
export async function verifySlackToken(client: webApi.WebClient, logger: Logger): Promise<SlackIdentity> {
  let auth: webApi.AuthTestResponse;
  try {
    auth = await client.auth.test();
    logger.info(`connected to Slack workspace ${auth.team ?? auth.team_id} as @${auth.user}`);
  } catch (error) {
    throw new Error(tokenCheckFailure(error, client.slackApiUrl));
  }
  if (!auth.user_id || !auth.bot_id) {
    throw new Error('SLACK_BOT_TOKEN is not a bot token: use the Bot User OAuth Token (xoxb-...)');
  }
  const missing = missingScopes(auth.response_metadata?.scopes);
  if (missing.length > 0) {
    logger.warn(
      `SLACK_BOT_TOKEN lacks ${missing.join(', ')}: update the app from manifest.yml and reinstall it`,
    );
  }
  const identity: SlackIdentity = { botUserId: auth.user_id, botId: auth.bot_id };
  // The app, to tell a request of another app (its signing secret or app token set beside this
  // token) from this one's: learnt after the start, which does not wait for it (requests wait for
  // the identity). Not known, the check is left out.
  void client.bots.info({ bot: auth.bot_id }).then(
    (app) => {
      if (app.bot?.app_id) identity.appId = app.bot.app_id;
    },
    () => {},
  );
  return identity;
}

/**
 * Whether a request came from the app SLACK_BOT_TOKEN is for: a signing secret (or an app-level
 * token) of one app beside the bot token of another (a development app's and the team's, say) has
 * the bot post as the other app, where it may not be invited. Said once per other app.
 */
export function originCheck(logger: Logger): (identity: SlackIdentity, from: { appId?: string }) => void {
  // The app alone: a request's team is the acting person's (a Slack Connect partner's is another).
  const said = new Set<string>();
  return (identity, from) => {
    if (!identity.appId || !from.appId || from.appId === identity.appId || said.has(from.appId)) return;
    said.add(from.appId);
    logger.error(
      `a Slack request came from app ${from.appId}, while SLACK_BOT_TOKEN is app ${identity.appId}'s: SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN) and SLACK_BOT_TOKEN belong to different apps. ` +
        'Copy all of them from the one app ("Basic Information" and "OAuth & Permissions")',
    );
  };
}

/**
 * The bot scopes the token was not granted, from the scopes Slack sends with each answer
 * (`x-oauth-scopes`, which the Web API client puts in `response_metadata.scopes`); none when
 * Slack (or a proxy) sent no such header.
 */
function missingScopes(granted: string[] | undefined): string[] {
  const have = new Set((granted ?? []).map((scope) => scope.trim()).filter((scope) => scope !== ''));
  if (have.size === 0) return []; // no header, or an empty one: nothing to go by
  return BOT_SCOPES.filter((scope) => !have.has(scope));
}

/** Why `auth.test` failed, in plain words: Slack's refusal (and what to do), or why Slack could not be reached. */
function tokenCheckFailure(error: unknown, apiUrl: string): string {
  const { data, statusCode, original } = error as {
    data?: { error?: string };
    statusCode?: number;
    original?: { message?: string; cause?: { code?: string; message?: string } };
  };
  const code = data?.error;
  if (code === 'invalid_auth' || code === 'not_authed' || code === 'token_revoked') {
    return `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions" after installing the app`;
  }
  if (code === 'account_inactive') {
    return 'Slack refused SLACK_BOT_TOKEN (account_inactive): the app was uninstalled or its workspace deactivated; install the app again and copy its new Bot User OAuth Token';
  }
  if (code) return `Slack refused SLACK_BOT_TOKEN (${code})`;
  const why =
    statusCode !== undefined
      ? `it answered HTTP ${statusCode}`
      : (original?.cause?.code ?? original?.cause?.message ?? original?.message ?? String(error));
  return `could not reach Slack at ${withoutCredentials(apiUrl, 'SLACK_API_URL')} to check SLACK_BOT_TOKEN (${why}): check the network, a proxy, or SLACK_API_URL`;
}
