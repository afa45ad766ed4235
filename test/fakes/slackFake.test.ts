import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../support/loggers.js';
import { type SlackFake, startSlackFake } from './slackFake.js';

const botToken = 'xoxb-test-token';
const silent = silentLogger;

let slack: SlackFake;
let client: webApi.WebClient;

const clientFor = (token: string) =>
  new webApi.WebClient(token, {
    slackApiUrl: slack.apiUrl,
    logger: silent,
    retryConfig: { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 10 },
  });

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

beforeEach(async () => {
  slack = await startSlackFake({ botToken });
  client = clientFor(botToken);
});
afterEach(() => slack.close());

describe('the Slack fake, through a real WebClient', () => {
  it('answers auth.test as the bot, and refuses a wrong or missing token', async () => {
    expect(await client.auth.test()).toMatchObject({
      ok: true,
      user_id: 'U0BOT',
      bot_id: 'B0BOT',
      team_id: 'T0TEAM',
    });
    await expect(clientFor('xoxb-wrong').auth.test()).rejects.toMatchObject({
      data: { error: 'invalid_auth' },
    });
    await expect(
      new webApi.WebClient(undefined, { slackApiUrl: slack.apiUrl, logger: silent }).auth.test(),
    ).rejects.toMatchObject({ data: { error: 'not_authed' } });
  });

  it('stores a posted card with its blocks and returns them from the thread', async () => {
    const blocks = [{ type: 'header', text: { type: 'plain_text', text: 'Docs job' } }, section('*Running*')];
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'Docs job', blocks });
    expect(posted.ts).toMatch(/^\d{10}\.\d{6}$/);

    const call = await slack.waitForCall('chat.postMessage');
    expect(call.args.blocks).toEqual(blocks);
    expect(call.token).toBe(botToken);

    slack.seedMessage('C1', { user: 'U1', text: 'also fix the title', thread_ts: posted.ts });
    const reply = await client.chat.postMessage({ channel: 'C1', text: 'Sent', thread_ts: posted.ts ?? '' });
    expect(Number(reply.ts)).toBeGreaterThan(Number(posted.ts));

    const thread = await client.conversations.replies({ channel: 'C1', ts: posted.ts ?? '' });
    expect(thread.messages?.map((m) => m.text)).toEqual(['Docs job', 'also fix the title', 'Sent']);
    expect(thread.messages?.[0]).toMatchObject({ user: 'U0BOT', bot_id: 'B0BOT', reply_count: 2, blocks });

    const since = await client.conversations.replies({
      channel: 'C1',
      ts: posted.ts ?? '',
      oldest: reply.ts ?? '',
    });
    expect(since.messages?.map((m) => m.text)).toEqual(['Docs job']);
  });

  it('updates only messages it knows, and only the bot’s own', async () => {
    const { ts } = await client.chat.postMessage({ channel: 'C1', text: 'Queued' });
    await client.chat.update({ channel: 'C1', ts: ts ?? '', text: 'Done', blocks: [section('Done')] });
    expect(slack.message('C1', ts ?? '')).toMatchObject({ text: 'Done', blocks: [section('Done')] });

    await expect(client.chat.update({ channel: 'C1', ts: '1.000000', text: 'x' })).rejects.toMatchObject({
      data: { error: 'message_not_found' },
    });
    const human = slack.seedMessage('C1', { user: 'U1', text: 'hi' });
    await expect(client.chat.update({ channel: 'C1', ts: human.ts, text: 'x' })).rejects.toMatchObject({
      data: { error: 'cant_update_message' },
    });
  });

  it('answers invalid_blocks for what Slack refuses, pointing at the block', async () => {
    const refused = async (blocks: unknown[]) => {
      const error = await client.chat
        .postMessage({ channel: 'C1', text: 't', blocks: blocks as never })
        .catch((e) => e);
      return error.data as { error: string; errors: string[] };
    };
    expect(await refused([section('x'.repeat(3001))])).toMatchObject({
      error: 'invalid_blocks',
      errors: ['must be less than 3001 characters [json-pointer:/blocks/0/text/text]'],
    });
    expect((await refused(Array.from({ length: 51 }, () => ({ type: 'divider' })))).errors).toEqual([
      'no more than 50 items allowed [json-pointer:/blocks]',
    ]);
    expect(
      (await refused([{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }])).errors,
    ).toEqual(['must be less than 151 characters [json-pointer:/blocks/0/text/text]']);
    const fields = Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' }));
    expect((await refused([{ type: 'section', fields }])).error).toBe('invalid_blocks');
    const button = { type: 'button', text: { type: 'plain_text', text: 'b'.repeat(76) }, action_id: 'a' };
    expect((await refused([{ type: 'actions', elements: [button] }])).errors).toEqual([
      'must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]',
    ]);
    const elements = Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'c' }));
    expect((await refused([{ type: 'context', elements }])).error).toBe('invalid_blocks');
    expect((await refused([section('')])).error).toBe('invalid_blocks');
    // Each block within its limits, but more text in all than Slack takes in one message.
    expect((await refused(Array.from({ length: 4 }, () => section('t'.repeat(2_800))))).error).toBe(
      'msg_blocks_too_long',
    );

    await expect(client.chat.postMessage({ channel: 'C1', text: '' })).rejects.toMatchObject({
      data: { error: 'no_text' },
    });
    expect(slack.history('C1')).toEqual([]);
    // As much text as a message Slack took, in fewer blocks.
    await expect(
      client.chat.postMessage({
        channel: 'C1',
        text: 't',
        blocks: Array.from({ length: 3 }, () => section('t'.repeat(2_800))) as never,
      }),
    ).resolves.toMatchObject({ ok: true });
  });

  it('truncates message text beyond 40,000 characters', async () => {
    const { ts } = await client.chat.postMessage({ channel: 'C1', text: 'a'.repeat(40_100) });
    expect(slack.message('C1', ts ?? '')?.text).toHaveLength(40_000);
  });

  it('fails the next calls as told, then answers normally', async () => {
    slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).rejects.toMatchObject({
      code: 'slack_webapi_platform_error',
      data: { error: 'not_in_channel' },
    });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).resolves.toMatchObject({ ok: true });
  });

  it('rate-limits with Retry-After, which WebClient waits out and retries', async () => {
    slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    const started = Date.now();
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).resolves.toMatchObject({ ok: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(slack.callsTo('chat.postMessage').map((c) => c.status)).toEqual([429, 200]);
  });

  it('answers HTTP 500 as told; WebClient retries it within its retry budget', async () => {
    slack.failNext('chat.postMessage', { status: 500 }, 2);
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).resolves.toMatchObject({ ok: true });
    slack.failNext('chat.postMessage', { status: 500 }, 3);
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).rejects.toMatchObject({
      code: 'slack_webapi_http_error',
      statusCode: 500,
    });
  });

  it('answers late when told to', async () => {
    slack.failNext('auth.test', { delayMs: 150 });
    const started = Date.now();
    await client.auth.test();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('waitForCall resolves when the call arrives, and says what it saw when it does not', async () => {
    const waiting = slack.waitForCall('chat.postEphemeral', (call) => call.args.user === 'U1');
    await client.chat.postEphemeral({ channel: 'C1', user: 'U2', text: 'not this one' });
    await client.chat.postEphemeral({ channel: 'C1', user: 'U1', text: 'Job started' });
    expect((await waiting).args.text).toBe('Job started');

    await expect(slack.waitForCall('chat.update', undefined, 50)).rejects.toThrow(
      /expected 1 chat.update call\(s\) within 50 ms[\s\S]*chat.postEphemeral -> ok \(channel="C1", user="U2"/,
    );
  });

  it('reacts once per emoji, and wants the bare emoji name', async () => {
    const { ts = '' } = await client.chat.postMessage({ channel: 'C1', text: 'card' });
    const reply = slack.seedMessage('C1', { user: 'U1', text: 'steer', thread_ts: ts });
    await client.reactions.add({ channel: 'C1', timestamp: reply.ts, name: 'white_check_mark' });
    await expect(
      client.reactions.add({ channel: 'C1', timestamp: reply.ts, name: 'white_check_mark' }),
    ).rejects.toMatchObject({ data: { error: 'already_reacted' } });
    await expect(
      client.reactions.add({ channel: 'C1', timestamp: reply.ts, name: ':eyes:' }),
    ).rejects.toMatchObject({
      data: { error: 'invalid_name' },
    });
    expect(slack.message('C1', reply.ts)?.reactions).toEqual([
      { name: 'white_check_mark', users: ['U0BOT'], count: 1 },
    ]);
  });

  it('refuses methods the granted scopes do not allow, like Slack', async () => {
    await slack.close();
    slack = await startSlackFake({ botToken, scopes: ['commands', 'chat:write'] });
    client = clientFor(botToken);
    slack.seedUser({ id: 'U1', name: 'ada' });
    await expect(client.users.info({ user: 'U1' })).rejects.toMatchObject({
      data: { error: 'missing_scope', needed: 'users:read' },
    });
    await expect(client.apiCall('chat.unknownThing')).rejects.toMatchObject({
      data: { error: 'unknown_method' },
    });
  });

  it('checks a modal like Slack, which reports it as invalid_arguments', async () => {
    const view = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'A title far too long here' },
      blocks: [],
    };
    await expect(client.views.open({ trigger_id: '1.2.3', view })).rejects.toMatchObject({
      data: {
        error: 'invalid_arguments',
        errors: ['must be less than 25 characters [json-pointer:/view/title/text]'],
      },
    });
    view.title.text = 'Steer job';
    expect(await client.views.open({ trigger_id: '1.2.3', view })).toMatchObject({
      ok: true,
      view: { type: 'modal' },
    });
  });

  it('records what Bolt’s respond() posts to a response URL', async () => {
    const url = slack.responseUrl('cmd-1');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', text: 'Usage: /docs-agent <instruction>' }),
    });
    expect(response.status).toBe(200);
    const call = await slack.waitForCall('response_url');
    expect(call).toMatchObject({ responseId: 'cmd-1', args: { text: 'Usage: /docs-agent <instruction>' } });
  });

  it('refuses bad blocks and a sixth use of a response URL with HTTP errors, as Slack does', async () => {
    const url = slack.responseUrl();
    const post = (body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ blocks: [section('')] })).status).toBe(400);
    for (let use = 2; use <= 5; use += 1) expect((await post({ text: `use ${use}` })).status).toBe(200);
    expect((await post({ text: 'one too many' })).status).toBe(404);
    expect(slack.callsTo('response_url').map((c) => c.response.error ?? 'ok')).toEqual([
      'invalid_blocks',
      'ok',
      'ok',
      'ok',
      'ok',
      'used_url',
    ]);
  });

  it('refuses a reply in a thread an admin locked, or under a deleted parent (a tombstone)', async () => {
    const { ts: locked } = await client.chat.postMessage({ channel: 'C1', text: 'Card' });
    slack.lockThread('C1', locked ?? '');
    await expect(
      client.chat.postMessage({ channel: 'C1', text: 'News', thread_ts: locked ?? '' }),
    ).rejects.toMatchObject({ data: { error: 'restricted_action_thread_locked' } });
    // The channel itself still takes messages.
    expect((await client.chat.postMessage({ channel: 'C1', text: 'News' })).ok).toBe(true);

    const { ts: parent } = await client.chat.postMessage({ channel: 'C1', text: 'Card' });
    slack.seedMessage('C1', { user: 'U1', text: 'a reply', thread_ts: parent ?? '' });
    slack.deleteMessage('C1', parent ?? '');
    await expect(
      client.chat.postMessage({ channel: 'C1', text: 'News', thread_ts: parent ?? '' }),
    ).rejects.toMatchObject({ data: { error: 'cannot_reply_to_message' } });
  });
});
