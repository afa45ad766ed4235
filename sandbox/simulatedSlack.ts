import { randomBytes, randomUUID } from 'node:crypto';
import { escapeSlackText } from '../src/slack/escape.js';
import { testWorkspace } from '../test/fakes/slack/ids.js';
import { type SlackFake, type StoredMessage, startSlackFake } from '../test/fakes/slackFake.js';
import {
  type SlackResponse,
  sendEvent,
  sendInteraction,
  sendSlashCommand,
} from '../test/support/slackRequests.js';

/**
 * Slack, simulated on loopback: the test fake answers the bot's Web API calls like Slack (and
 * refuses what Slack would refuse), and you act in the workspace as @ada in #docs and in your DM
 * with the bot. What you do reaches the bot as Slack sends it: signed HTTP requests (slash
 * commands, events, shortcuts, form submissions), after your messages are in the channel's
 * history, where the bot reads threads and permalinks.
 */

export const SANDBOX_SLACK = {
  botToken: 'xoxb-sandbox-0000-not-a-real-token',
  channel: 'C0DOCS',
  channelName: 'docs',
  user: 'U0ADA',
  userName: 'ada',
  realName: 'Ada Lovelace',
  botUserId: testWorkspace.botUserId,
  botName: 'docs-agent',
} as const;

/** A form the bot opened (`views.open`), as Slack answered it: with its id and hash. */
export type OpenedView = Record<string, unknown> & { id: string };

/** What you typed and ticked in a form, by block and action id, as Slack reports it. */
export type ViewValues = Record<string, Record<string, Record<string, unknown>>>;

export interface SimulatedSlack {
  fake: SlackFake;
  /** For the bot's SLACK_API_URL. */
  apiUrl: string;
  /** The secret Slack signs requests with; new on every run, as nothing outside needs it. */
  signingSecret: string;
  /** Your DM with the bot (the app's Messages tab). */
  dm: string;
  /** You type `/docs-agent <text>` in #docs; resolves with the bot's acknowledgement. */
  slashCommand(botUrl: string, text: string): Promise<SlackResponse>;
  /**
   * You post a message (a reply when `threadTs` is given) in #docs or your DM: it is in the
   * history, not yet delivered to the bot. `@docs-agent` and `@ada` become mentions, as Slack's
   * autocomplete makes them.
   */
  post(channel: string, text: string, threadTs?: string): StoredMessage;
  /**
   * Slack delivers your message to the bot: a `message` event (message.channels, or message.im in
   * the DM) and, when it mentions the bot in a channel, an `app_mention` too, both at once.
   */
  deliver(botUrl: string, channel: string, message: StoredMessage): Promise<SlackResponse[]>;
  /** You choose “Send to docs agent” on a message: a `message_action` with a new trigger_id. */
  messageShortcut(
    botUrl: string,
    callbackId: string,
    channel: string,
    message: StoredMessage,
  ): { triggerId: string; responseId: string; sent: Promise<SlackResponse> };
  /** You click a button of the bot's message: `block_actions` with its action_id and value. */
  clickButton(
    botUrl: string,
    channel: string,
    message: StoredMessage,
    /** `blockId`: the id of the block the button is in, as Slack sends it (it makes one up when the block has none). */
    button: { action_id: string; value?: string; text: string; blockId?: string },
  ): { triggerId: string; responseId: string; sent: Promise<SlackResponse> };
  /** You submit a form the bot opened: a `view_submission` of that view, with what you entered. */
  submitView(botUrl: string, view: OpenedView, values: ViewValues): Promise<SlackResponse>;
  /** You open the bot's Home tab: `app_home_opened`, with the view last published there, if any. */
  openHome(botUrl: string): Promise<SlackResponse>;
  close(): Promise<void>;
}

export async function startSimulatedSlack(): Promise<SimulatedSlack> {
  const fake = await startSlackFake({ botToken: SANDBOX_SLACK.botToken });
  fake.seedUser({ id: SANDBOX_SLACK.user, name: SANDBOX_SLACK.userName, real_name: SANDBOX_SLACK.realName });
  const signingSecret = randomBytes(24).toString('hex');
  const dm = fake.dmWith(SANDBOX_SLACK.user);
  const you = { user_id: SANDBOX_SLACK.user, user_name: SANDBOX_SLACK.userName };
  const here = { channel_id: SANDBOX_SLACK.channel, channel_name: SANDBOX_SLACK.channelName };
  const team = { id: testWorkspace.teamId, domain: testWorkspace.teamDomain };
  const youInPayloads = {
    id: SANDBOX_SLACK.user,
    username: SANDBOX_SLACK.userName,
    name: SANDBOX_SLACK.userName,
    team_id: testWorkspace.teamId,
  };
  const mentionOfBot = `<@${SANDBOX_SLACK.botUserId}>`;

  return {
    fake,
    apiUrl: fake.apiUrl,
    signingSecret,
    dm,
    // Slack escapes &, < and > in what people type before it sends it on.
    slashCommand: (botUrl, text) =>
      sendSlashCommand(botUrl, signingSecret, {
        text: escapeSlackText(text),
        response_url: fake.responseUrl(),
        ...you,
        ...here,
      }),
    post: (channel, text, threadTs) =>
      fake.seedMessage(channel, {
        user: SANDBOX_SLACK.user,
        text: withMentions(escapeSlackText(text)),
        ...(threadTs ? { thread_ts: threadTs } : {}),
      }),
    deliver(botUrl, channel, message) {
      const inDm = channel === dm;
      const fields = {
        channel,
        user: message.user,
        text: message.text,
        ts: message.ts,
        ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
        ...(message.parent_user_id ? { parent_user_id: message.parent_user_id } : {}),
        team: testWorkspace.teamId,
        client_msg_id: randomUUID(),
      };
      const events: Array<Record<string, unknown>> = [
        { type: 'message', channel_type: inDm ? 'im' : 'channel', ...fields },
      ];
      if (!inDm && message.text.includes(mentionOfBot)) events.push({ type: 'app_mention', ...fields });
      return Promise.all(events.map((event) => sendEvent(botUrl, signingSecret, event)));
    },
    messageShortcut(botUrl, callbackId, channel, message) {
      const triggerId = `${Date.now()}.${randomUUID()}`;
      const responseId = `shortcut-${randomUUID()}`;
      const sent = sendInteraction(botUrl, signingSecret, {
        type: 'message_action',
        token: 'deprecated-verification-token',
        action_ts: `${Date.now() / 1000}`,
        team,
        user: youInPayloads,
        channel: {
          id: channel,
          name: channel === dm ? 'directmessage' : SANDBOX_SLACK.channelName,
        },
        is_enterprise_install: false,
        enterprise: null,
        callback_id: callbackId,
        trigger_id: triggerId,
        response_url: fake.responseUrl(responseId),
        message_ts: message.ts,
        message,
      });
      return { triggerId, responseId, sent };
    },
    clickButton(botUrl, channel, message, button) {
      const triggerId = `${Date.now()}.${randomUUID()}`;
      const responseId = `button-${randomUUID()}`;
      const sent = sendInteraction(botUrl, signingSecret, {
        type: 'block_actions',
        team,
        user: youInPayloads,
        api_app_id: testWorkspace.appId,
        token: 'deprecated-verification-token',
        trigger_id: triggerId,
        container: { type: 'message', message_ts: message.ts, channel_id: channel, is_ephemeral: false },
        channel: { id: channel, name: SANDBOX_SLACK.channelName },
        message,
        response_url: fake.responseUrl(responseId),
        actions: [
          {
            type: 'button',
            action_id: button.action_id,
            block_id: button.blockId ?? randomUUID().slice(0, 5),
            text: { type: 'plain_text', text: button.text },
            ...(button.value === undefined ? {} : { value: button.value }),
            action_ts: `${Date.now() / 1000}`,
          },
        ],
      });
      return { triggerId, responseId, sent };
    },
    submitView: (botUrl, view, values) =>
      sendInteraction(botUrl, signingSecret, {
        type: 'view_submission',
        team,
        user: youInPayloads,
        api_app_id: testWorkspace.appId,
        token: 'deprecated-verification-token',
        trigger_id: `${Date.now()}.${randomUUID()}`,
        view: { ...view, state: { values } },
        response_urls: [],
        is_enterprise_install: false,
        enterprise: null,
      }),
    openHome(botUrl) {
      const published = fake
        .callsTo('views.publish')
        .filter((call) => call.args.user_id === SANDBOX_SLACK.user && call.response.ok === true)
        .at(-1)?.response.view;
      return sendEvent(botUrl, signingSecret, {
        type: 'app_home_opened',
        user: SANDBOX_SLACK.user,
        channel: dm,
        tab: 'home',
        event_ts: `${(Date.now() / 1000).toFixed(6)}`,
        ...(published ? { view: published } : {}),
      });
    },
    close: () => fake.close(),
  };
}

/** `@docs-agent`, `@ada`, `@here`, `@channel` and `@everyone` as Slack's autocomplete turns them into mentions. */
function withMentions(text: string): string {
  const ids: Record<string, string> = {
    [SANDBOX_SLACK.botName]: `@${SANDBOX_SLACK.botUserId}`,
    [SANDBOX_SLACK.userName]: `@${SANDBOX_SLACK.user}`,
    here: '!here',
    channel: '!channel',
    everyone: '!everyone',
  };
  return text.replace(/(^|[^\w@<])@([\w.-]*\w)/g, (all, before: string, name: string) => {
    const id = ids[name];
    return id ? `${before}<${id}>` : all;
  });
}
