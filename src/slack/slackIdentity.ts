import type { Logger, webApi } from '@slack/bolt';

/** The bot's own ids in the workspace, from one `auth.test` at start. */
export interface SlackIdentity {
  botUserId: string;
  botId: string;
}

/** A wrong token fails at start with a clear line, not on the first request; the bot's ids come with it. */
export async function verifySlackToken(client: webApi.WebClient, logger: Logger): Promise<SlackIdentity> {
  let auth: webApi.AuthTestResponse;
  try {
    auth = await client.auth.test();
    logger.info(`connected to Slack workspace ${auth.team ?? auth.team_id} as @${auth.user}`);
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    throw new Error(
      code === 'invalid_auth' || code === 'not_authed' || code === 'token_revoked'
        ? `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions" after installing the app`
        : `could not reach Slack to check SLACK_BOT_TOKEN: ${code ?? String(error)}`,
    );
  }
  if (!auth.user_id || !auth.bot_id) {
    throw new Error('SLACK_BOT_TOKEN is not a bot token: use the Bot User OAuth Token (xoxb-...)');
  }
  return { botUserId: auth.user_id, botId: auth.bot_id };
}
