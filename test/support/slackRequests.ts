/**
 * Requests as Slack sends them to the bot: slash commands and interactions form-encoded, events as
 * a JSON `event_callback` envelope, all signed with the signing secret (v0 HMAC-SHA256).
 */

import { createHmac, randomUUID } from 'node:crypto';
import { testWorkspace } from '../fakes/slack/ids.js';

export interface SlackSignatureHeaders {
  'x-slack-signature': string;
  'x-slack-request-timestamp': string;
}

/** How to spoil the signature, to see the bot refuse the request. */
export interface SigningOptions {
  /** Sign with the wrong secret. */
  badSignature?: boolean;
  /** Sign correctly but six minutes ago; Bolt refuses requests older than five. */
  staleTimestamp?: boolean;
  /** Sign at this Unix time (seconds) instead of now. */
  timestampSec?: number;
}

export interface SlackResponse {
  status: number;
  /** The raw body: empty for a plain ack, JSON when the listener acked with a message. */
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  headers: Record<string, string>;
}

export interface SlashCommandFields {
  text: string;
  /** Required so a test never makes the bot call a real Slack URL: use `slack.responseUrl()`. */
  response_url: string;
  command?: string;
  user_id?: string;
  user_name?: string;
  channel_id?: string;
  channel_name?: string;
  team_id?: string;
  team_domain?: string;
  trigger_id?: string;
  api_app_id?: string;
  [field: string]: string | undefined;
}

export interface EventOptions extends SigningOptions {
  eventId?: string;
  /** Sends x-slack-retry-num (and x-slack-retry-reason), as Slack does when it redelivers. */
  retryNum?: number;
  retryReason?: string;
  teamId?: string;
  botUserId?: string;
}

const nowSec = () => Math.floor(Date.now() / 1000);

export function signRequest(
  signingSecret: string,
  body: string,
  timestampSec = nowSec(),
): SlackSignatureHeaders {
  const digest = createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${body}`).digest('hex');
  return { 'x-slack-signature': `v0=${digest}`, 'x-slack-request-timestamp': String(timestampSec) };
}

export function sendSlashCommand(
  appUrl: string,
  signingSecret: string,
  fields: SlashCommandFields,
  signing: SigningOptions = {},
): Promise<SlackResponse> {
  const payload = {
    token: 'deprecated-verification-token',
    team_id: testWorkspace.teamId,
    team_domain: testWorkspace.teamDomain,
    channel_id: 'C0CHANNEL',
    channel_name: 'docs',
    user_id: 'U0USER',
    user_name: 'ada',
    command: '/docs-agent',
    api_app_id: testWorkspace.appId,
    is_enterprise_install: 'false',
    trigger_id: `${Date.now()}.${randomUUID()}`,
    ...fields,
  };
  const entries = Object.entries(payload).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return post(appUrl, signingSecret, new URLSearchParams(entries).toString(), 'form', signing);
}

/** Sends an event in its `event_callback` envelope; `event_ts` defaults to the event's `ts`. */
export function sendEvent(
  appUrl: string,
  signingSecret: string,
  event: Record<string, unknown>,
  options: EventOptions = {},
): Promise<SlackResponse> {
  const { eventId = `Ev${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`, retryNum } = options;
  const teamId = options.teamId ?? testWorkspace.teamId;
  const envelope = {
    token: 'deprecated-verification-token',
    team_id: teamId,
    api_app_id: testWorkspace.appId,
    event: { event_ts: event.ts ?? `${nowSec()}.000000`, ...event },
    type: 'event_callback',
    event_id: eventId,
    event_time: nowSec(),
    authorizations: [
      {
        enterprise_id: null,
        team_id: teamId,
        user_id: options.botUserId ?? testWorkspace.botUserId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
  };
  const retryHeaders: Record<string, string> =
    retryNum === undefined
      ? {}
      : {
          'x-slack-retry-num': String(retryNum),
          'x-slack-retry-reason': options.retryReason ?? 'http_timeout',
        };
  return post(appUrl, signingSecret, JSON.stringify(envelope), 'json', options, retryHeaders);
}

/** Sends a block action, view submission or shortcut payload, form-encoded as `payload=<json>`. */
export function sendInteraction(
  appUrl: string,
  signingSecret: string,
  payload: Record<string, unknown>,
  signing: SigningOptions = {},
): Promise<SlackResponse> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return post(appUrl, signingSecret, body, 'form', signing);
}

/**
 * The bot's "Send to docs agent" form (as `views.open` got it, with Slack's answer) submitted by
 * U0USER with `values` (Slack's `view.state.values`).
 */
export function sendFormSubmission(
  appUrl: string,
  signingSecret: string,
  opened: { args: Record<string, unknown>; response: Record<string, unknown> },
  values: Record<string, unknown>,
  /** Who submits it (the form's opener). */
  user = 'U0USER',
): Promise<SlackResponse> {
  const view = opened.args.view as { private_metadata: string; callback_id: string };
  return sendInteraction(appUrl, signingSecret, {
    type: 'view_submission',
    team: { id: 'T0TEAM', domain: 'acme' },
    user: { id: user, name: 'user', team_id: 'T0TEAM' },
    api_app_id: 'A0APP',
    token: 'deprecated',
    // Each submission has a trigger of its own, as in Slack: the bot queues it under that id.
    trigger_id: `${Date.now()}.${randomUUID()}`,
    view: {
      id: (opened.response.view as { id: string }).id,
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      hash: '1.abc',
      state: { values },
    },
  });
}

/** The endpoint: `appUrl` as given, or `/slack/events` on it when it is just the app's base URL. */
export function eventsEndpoint(appUrl: string): string {
  const url = new URL(appUrl);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/slack/events';
  return url.toString();
}

async function post(
  appUrl: string,
  signingSecret: string,
  body: string,
  kind: 'form' | 'json',
  signing: SigningOptions,
  extraHeaders: Record<string, string> = {},
): Promise<SlackResponse> {
  const timestamp = signing.staleTimestamp ? nowSec() - 6 * 60 : (signing.timestampSec ?? nowSec());
  const secret = signing.badSignature ? `${signingSecret}-wrong` : signingSecret;
  const response = await fetch(eventsEndpoint(appUrl), {
    method: 'POST',
    headers: {
      'content-type': kind === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
      ...signRequest(secret, body, timestamp),
      ...extraHeaders,
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text,
    json: parseJson(text),
    headers: Object.fromEntries(response.headers),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A message forwarded by @cat from #support, as Slack sends it along with the words typed with it:
 * an attachment marked `is_share` (the message's `text` is only the comment).
 */
export function forwardedMessage(text: string) {
  return {
    is_share: true,
    is_msg_unfurl: true,
    author_id: 'U0CAT',
    author_name: 'cat',
    from_url: 'https://acme.slack.com/archives/C0SUPPORT/p1700000000000100',
    channel_id: 'C0SUPPORT',
    text,
    fallback: `[November 20th, 2026 9:00 AM] cat: ${text}`,
  };
}

/** A mention of the bot as Slack sends it (`app_mention`): by @ada in #docs unless said otherwise. */
export function mentionEvent(fields: {
  ts: string;
  text: string | undefined;
  thread_ts?: string;
  user?: string;
  channel?: string;
  attachments?: unknown;
}) {
  return { type: 'app_mention', channel: 'C0DOCS', user: 'U0ADA', ...fields };
}

/** A message in the bot's DM as Slack sends it (`message.im`): `message` as seeded in the Slack fake. */
export function dmEvent(
  channel: string,
  message: { user?: string | undefined; text?: string | undefined; ts: string },
) {
  return {
    type: 'message',
    channel,
    channel_type: 'im',
    user: message.user,
    text: message.text,
    ts: message.ts,
  };
}

/**
 * Slack's word that a message changed (`message_changed`), for the message event `original` as Slack
 * sent it: the message as it is now (`text`, and `edited` when its author edited it: Slack's own
 * changes, such as a link preview added, have none) under `message`, as it was under
 * `previous_message`; the change has a ts of its own.
 */
export function messageChanged(
  original: { channel: string; channel_type?: string } & Record<string, unknown>,
  text: string,
  change: { ts: string; edited?: { user: string; ts: string } },
) {
  const { type: _type, subtype: _subtype, channel, channel_type, ...before } = original;
  return {
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    channel,
    channel_type,
    ts: change.ts,
    message: { type: 'message', ...before, text, ...(change.edited ? { edited: change.edited } : {}) },
    previous_message: { type: 'message', ...before },
  };
}
