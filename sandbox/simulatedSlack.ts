import { randomBytes } from 'node:crypto';
import { escapeSlackText } from '../src/slack/escape.js';
import { testWorkspace } from '../test/fakes/slack/ids.js';
import { type SlackFake, type StoredMessage, startSlackFake } from '../test/fakes/slackFake.js';
import { type SlackResponse, sendEvent, sendSlashCommand } from '../test/support/slackRequests.js';

/**
 * Slack, simulated on loopback: the test fake answers the bot's Web API calls like Slack (and
 * refuses what Slack would refuse), and you act in the workspace as @ada in #docs. Your slash
 * commands and thread replies reach the bot as Slack sends them: signed HTTP requests.
 */

export const SANDBOX_SLACK = {
  botToken: 'xoxb-sandbox-0000-not-a-real-token',
  channel: 'C0DOCS',
  channelName: 'docs',
  user: 'U0ADA',
  userName: 'ada',
  realName: 'Ada Lovelace',
  botUserId: testWorkspace.botUserId,
} as const;

export interface SimulatedSlack {
  fake: SlackFake;
  /** For the bot's SLACK_API_URL. */
  apiUrl: string;
  /** The secret Slack signs requests with; new on every run, as nothing outside needs it. */
  signingSecret: string;
  /** You type `/docs-agent <text>` in #docs; resolves with the bot's acknowledgement. */
  slashCommand(botUrl: string, text: string): Promise<SlackResponse>;
  /** You reply in a thread of #docs: the message is in the channel, not yet delivered to the bot. */
  reply(threadTs: string, text: string): StoredMessage;
  /** Slack delivers your message to the bot as a `message` event. */
  deliver(botUrl: string, message: StoredMessage): Promise<SlackResponse>;
  close(): Promise<void>;
}

export async function startSimulatedSlack(): Promise<SimulatedSlack> {
  const fake = await startSlackFake({ botToken: SANDBOX_SLACK.botToken });
  fake.seedUser({ id: SANDBOX_SLACK.user, name: SANDBOX_SLACK.userName, real_name: SANDBOX_SLACK.realName });
  const signingSecret = randomBytes(24).toString('hex');
  const you = { user_id: SANDBOX_SLACK.user, user_name: SANDBOX_SLACK.userName };
  const here = { channel_id: SANDBOX_SLACK.channel, channel_name: SANDBOX_SLACK.channelName };

  return {
    fake,
    apiUrl: fake.apiUrl,
    signingSecret,
    // Slack escapes &, < and > in what people type before it sends it on.
    slashCommand: (botUrl, text) =>
      sendSlashCommand(botUrl, signingSecret, {
        text: escapeSlackText(text),
        response_url: fake.responseUrl(),
        ...you,
        ...here,
      }),
    reply: (threadTs, text) =>
      fake.seedMessage(SANDBOX_SLACK.channel, {
        user: SANDBOX_SLACK.user,
        text: escapeSlackText(text),
        thread_ts: threadTs,
      }),
    deliver: (botUrl, message) =>
      sendEvent(botUrl, signingSecret, {
        type: 'message',
        channel: SANDBOX_SLACK.channel,
        channel_type: 'channel',
        user: message.user,
        text: message.text,
        ts: message.ts,
        ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
        team: testWorkspace.teamId,
      }),
    close: () => fake.close(),
  };
}
