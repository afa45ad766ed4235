import { createHash } from 'node:crypto';
import { type Logger, webApi } from '@slack/bolt';
import type Keyv from 'keyv';
import { classifySlackError, slackErrorCode } from './slackErrors.js';

/** How long a refusal told to the other processes stands, unless a call Slack takes clears it first. */
const SHARED_FOR_MS = 10 * 60_000;

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
  /** Where the processes on one store tell each other of a refusal: by the token's fingerprint. */
  private shared: { kv: Pick<Keyv, 'get' | 'set' | 'delete'>; key: string } | undefined;
  private sharedSeen = false;

  constructor(private readonly logger: Logger) {}

  /**
   * Shares refusals with the other processes on `store`: the first to find the token refused tells
   * them, so that none of them makes a job at Mintlify whose card could not be posted. Keyed by a
   * fingerprint of the token, never the token: processes already on a new token are not told.
   */
  share(store: { kv: Pick<Keyv, 'get' | 'set' | 'delete'> }, token: string): void {
    const fingerprint = createHash('sha256').update(token).digest('hex').slice(0, 16);
    this.shared = { kv: store.kv, key: `slack-token-refused:${fingerprint}` };
  }

  /** Whether another process found this token refused lately (then ask Slack before relying on it). */
  async refusedElsewhere(): Promise<boolean> {
    if (!this.shared || this.refusedWith !== undefined) return false;
    const seen = (await this.shared.kv.get(this.shared.key).catch(() => undefined)) !== undefined;
    this.sharedSeen ||= seen;
    return seen;
  }

  /** The Slack error code it was refused with, while it is. */
  get refusal(): string | undefined {
    return this.refusedWith;
  }

  refused(code: string): void {
    if (this.refusedWith !== undefined) return;
    this.refusedWith = code;
    void this.shared?.kv.set(this.shared.key, code, SHARED_FOR_MS).catch(() => {});
    if (!this.worked) return;
    this.logger.error(
      `Slack refuses SLACK_BOT_TOKEN (${code}): the app was installed again (which issues a new token) or its token was revoked. ` +
        'Copy the Bot User OAuth Token from "OAuth & Permissions" into SLACK_BOT_TOKEN and restart the bot. Until then no job is started.',
    );
  }

  taken(): void {
    const wasRefused = this.refusedWith !== undefined && this.worked;
    // Taken again here: the other processes need not ask Slack first any more.
    if (this.shared && (this.refusedWith !== undefined || this.sharedSeen)) {
      this.sharedSeen = false;
      void this.shared.kv.delete(this.shared.key).catch(() => {});
    }
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
