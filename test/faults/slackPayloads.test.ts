import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testWorkspace } from '../fakes/slack/ids.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';
import { signRequest } from '../support/slackRequests.js';

/**
 * Requests Slack would never send, or would send once: unsigned, stale, replayed, malformed,
 * of unknown types, huge. Each is refused or ignored with a line in the log, none crashes the
 * bot, and it keeps answering.
 */

let h: BotHarness;
beforeAll(async () => {
  h = await startBot();
});
afterAll(() => h?.close());

const nowSec = () => Math.floor(Date.now() / 1000);

interface Sent {
  status: number;
  body: string;
}

/** POSTs `body` to the bot as it is, signed (at `timestampSec`) unless told not to. */
async function post(
  body: string,
  options: { form?: boolean; unsigned?: boolean; timestampSec?: number } = {},
): Promise<Sent> {
  const headers: Record<string, string> = {
    'content-type': options.form ? 'application/x-www-form-urlencoded' : 'application/json',
    ...(options.unsigned ? {} : signRequest(SECRETS.signingSecret, body, options.timestampSec)),
  };
  const response = await fetch(`${h.url}/slack/events`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.text() };
}

/** Over a connection of its own: the bot answers 413 before reading it all and closes that connection. */
function postOversized(body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${h.url}/slack/events`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...signRequest(SECRETS.signingSecret, body) },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const envelope = (event: unknown, eventId = `Ev${Math.random().toString(36).slice(2, 12).toUpperCase()}`) =>
  JSON.stringify({
    token: 'deprecated-verification-token',
    team_id: testWorkspace.teamId,
    api_app_id: testWorkspace.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: nowSec(),
    authorizations: [{ team_id: testWorkspace.teamId, user_id: testWorkspace.botUserId, is_bot: true }],
  });

const slashCommand = (text: string, triggerId: string) =>
  new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: testWorkspace.teamId,
    channel_id: 'C0REPLAY',
    user_id: 'U0ADA',
    command: '/docs-agent',
    text,
    response_url: h.slack.responseUrl(triggerId),
    trigger_id: triggerId,
    api_app_id: testWorkspace.appId,
  }).toString();

const logged = (text: string) => h.logs.some((line) => line.includes(text));

describe('requests that are not Slack’s, or not anymore', () => {
  it('an unsigned request is refused (401) with a line in the log', async () => {
    const sent = await post(slashCommand('Document X', 'unsigned'), { form: true, unsigned: true });
    expect(sent.status).toBe(401);
    expect(logged('Failed to verify authenticity')).toBe(true);
  });

  it('a request signed more than 5 minutes ago is refused (401): an old capture cannot be replayed', async () => {
    const sent = await post(slashCommand('Document X', 'stale'), {
      form: true,
      timestampSec: nowSec() - 6 * 60,
    });
    expect(sent.status).toBe(401);
  });

  it('an exact replay of a slash command within those minutes starts one job, not two', async () => {
    const body = slashCommand('Document the replay', 'replayed-command');
    const timestampSec = nowSec();
    const first = await post(body, { form: true, timestampSec });
    const again = await post(body, { form: true, timestampSec });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ text: expect.stringContaining('Starting') });
    // The copy is acknowledged as the original was; its queue job (named by the trigger) is the same, so it is not queued again.
    expect(again.status).toBe(200);
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0REPLAY');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('an exact replay of a mention starts one job, not two', async () => {
    const creates = h.mintlify.requestsFor('createJob').length;
    const body = envelope({
      type: 'app_mention',
      channel: 'C0REPLAY',
      user: 'U0ADA',
      text: `<@${testWorkspace.botUserId}> Document the mention replay`,
      ts: `${nowSec()}.000200`,
    });
    const timestampSec = nowSec();
    expect((await post(body, { timestampSec })).status).toBe(200);
    expect((await post(body, { timestampSec })).status).toBe(200);
    await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('mention replay'),
    );
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(creates + 1);
  });
});

describe('malformed payloads', () => {
  it.each([
    ['a body that is not JSON', 400, '{"type":"event_cal', 'Malformed request body'],
    ['an event without a type', 200, envelope({ ts: '1.000100' }), 'ignored a Slack event: it has no type'],
    [
      'a message without its channel',
      200,
      envelope({ type: 'message', user: 'U0ADA', text: 'hi', ts: '1.000100' }),
      'ignored a Slack event: a message without channel',
    ],
    [
      'a mention whose fields have the wrong types',
      200,
      envelope({ type: 'app_mention', channel: 5, user: ['U0ADA'], text: 7, ts: {} }),
      'ignored a Slack event: a app_mention whose channel, ts, user, text are not text',
    ],
    [
      'an event of a type no door takes',
      200,
      envelope({ type: 'made_up_event', ts: '1.000100' }),
      'ignored a Slack event of type "made_up_event"',
    ],
  ])('%s is answered %i, logged, and reaches no door', async (_name, status, body, line) => {
    const requests = h.mintlify.requests.length;
    expect((await post(body)).status).toBe(status);
    await expect.poll(() => logged(line)).toBe(true);
    expect(h.mintlify.requests).toHaveLength(requests);
    expect(logged('unhandled error in a listener')).toBe(false);
  });

  it('a slash command without its usual fields gets the usage help', async () => {
    const sent = await post(new URLSearchParams({ command: '/docs-agent' }).toString(), { form: true });
    expect(sent.status).toBe(200);
    expect(JSON.parse(sent.body)).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('Tell me what to change'),
    });
  });

  it('an interaction whose payload is not JSON is refused (400)', async () => {
    const sent = await post(new URLSearchParams({ payload: '{not json' }).toString(), { form: true });
    expect(sent.status).toBe(400);
  });

  it('a body past Bolt’s 4 MB limit is refused (413) with a line in the log', async () => {
    const huge = envelope({
      type: 'message',
      channel: 'C0DOCS',
      user: 'U0ADA',
      text: 'x'.repeat(5_000_000),
      ts: '1.000100',
      thread_ts: '1.000000',
    });
    expect(await postOversized(huge)).toBe(413);
    expect(logged('Request body exceeded the maximum allowed size')).toBe(true);
  });

  it('a mention with a huge instruction starts its job, and the card stays within Slack’s limits', async () => {
    const creates = h.mintlify.requestsFor('createJob').length;
    const text = `<@${testWorkspace.botUserId}> Document ${'everything '.repeat(100_000)}`;
    const body = envelope({
      type: 'app_mention',
      channel: 'C0HUGE',
      user: 'U0ADA',
      text,
      ts: `${nowSec()}.000300`,
    });
    expect((await post(body)).status).toBe(200);
    const card = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0HUGE');
    expect(card.response.ok).toBe(true);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(creates + 1);
  });

  it('after all of it, the bot still answers', async () => {
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    await h.command('Document the survivor', { channel_id: 'C0AFTER' });
    const card = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0AFTER');
    expect(card.response.ok).toBe(true);
  });
});
