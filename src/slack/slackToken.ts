import { type Logger, webApi } from '@slack/bolt';
import { classifySlackError, slackErrorCode } from './slackErrors.js';

/**
 * Whether Slack takes the bot's token now. A token Slack refuses while the bot runs (the app was
 * uninstalled and installed again, which issues a new token, or the token was revoked) fails every
 * call: said once, plainly, and asked by the start of a job, which then creates nothing at Mintlify
 * (a job whose card can never be posted). Any call Slack takes again clears it.
 */
export class SlackTokenState {
  private refusedWith: string | undefined;
  /** Whether Slack took it once: a token refused from the start is the start's to say (and it stops). */
  private worked = false;

  constructor(private readonly logger: Logger) {}

  /** The Slack error code it was refused with, while it is. */
  get refusal(): string | undefined {
    return this.refusedWith;
  }

  refused(code: string): void {
    if (this.refusedWith !== undefined) return;
    this.refusedWith = code;
    if (!this.worked) return;
    this.logger.error(
      `Slack refuses SLACK_BOT_TOKEN (${code}): the app was installed again (which issues a new token) or its token was revoked. ` +
        'Copy the Bot User OAuth Token from "OAuth & Permissions" into SLACK_BOT_TOKEN and restart the bot. Until then no job is started.',
    );
  }

  taken(): void {
    const wasRefused = this.refusedWith !== undefined && this.worked;
    this.worked = true;
    this.refusedWith = undefined;
    if (wasRefused) this.logger.info('Slack takes SLACK_BOT_TOKEN again');
  }
}

/** A Web API client whose every call tells `token` whether Slack took the token. */
export class WatchedWebClient extends webApi.WebClient {
  constructor(
    token: string,
    options: webApi.WebClientOptions,
    private readonly watched: SlackTokenState,
  ) {
    super(token, options);
  }

  override async apiCall(
    method: string,
    options?: Record<string, unknown>,
  ): Promise<webApi.WebAPICallResult> {
    try {
      const result = await super.apiCall(method, options);
      this.watched.taken();
      return result;
    } catch (error) {
      if (classifySlackError(error) === 'auth') this.watched.refused(slackErrorCode(error) ?? 'invalid_auth');
      throw error;
    }
  }
}
