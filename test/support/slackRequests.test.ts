import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, isValidSlackRequest, LogLevel, verifySlackRequest } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { sendEvent, sendInteraction, sendSlashCommand, signRequest } from './slackRequests.js';

const signingSecret = 'test-signing-secret';

describe('signRequest', () => {
  const body = 'command=%2Fdocs-agent&text=fix+the+quickstart';
  const verify = (headers: ReturnType<typeof signRequest>, secret = signingSecret) => ({
    signingSecret: secret,
    body,
    headers: {
      'x-slack-signature': headers['x-slack-signature'],
      'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
    },
  });

  it('signs the way Bolt verifies', () => {
    expect(() => verifySlackRequest(verify(signRequest(signingSecret, body)))).not.toThrow();
  });

  it('is refused by Bolt when the secret is wrong or the timestamp is stale', () => {
    expect(isValidSlackRequest(verify(signRequest('another-secret', body)))).toBe(false);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 360;
    expect(isValidSlackRequest(verify(signRequest(signingSecret, body, sixMinutesAgo)))).toBe(false);
  });
});

describe('signed requests to a real Bolt app', () => {
  let slack: SlackFake;
  let app: App;
  let appUrl: string;
  const messageSeen = deferred<unknown>();
  const actionSeen = deferred<unknown>();

  beforeAll(async () => {
    slack = await startSlackFake({ botToken: 'xoxb-test' });
    app = new App({
      token: 'xoxb-test',
      signingSecret,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.apiUrl },
    });
    app.command('/docs-agent', async ({ ack, respond, command }) => {
      await ack();
      await respond({ text: `Starting: ${command.text}` });
    });
    app.event('message', async ({ event, context }) => {
      messageSeen.resolve({ event, retryNum: context.retryNum });
    });
    app.action('cancel_job', async ({ ack, action }) => {
      await ack();
      actionSeen.resolve(action);
    });
    const server = (await app.start(0)) as Server;
    appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.stop();
    await slack.close();
  });

  it('delivers a slash command whose respond() reaches the fake', async () => {
    const responseUrl = slack.responseUrl('cmd');
    const sent = await sendSlashCommand(appUrl, signingSecret, {
      text: 'fix the quickstart',
      response_url: responseUrl,
    });
    expect(sent.status).toBe(200);
    const call = await slack.waitForCall('response_url');
    expect(call).toMatchObject({ responseId: 'cmd', args: { text: 'Starting: fix the quickstart' } });
  });

  it('is refused with 401 when the signature is bad or stale', async () => {
    const fields = { text: 'x', response_url: slack.responseUrl() };
    expect((await sendSlashCommand(appUrl, signingSecret, fields, { badSignature: true })).status).toBe(401);
    expect((await sendSlashCommand(appUrl, signingSecret, fields, { staleTimestamp: true })).status).toBe(
      401,
    );
  });

  it('delivers an event with its retry number, and an interaction', async () => {
    const message = { type: 'message', channel: 'C1', user: 'U1', text: 'more', ts: '1700000001.000100' };
    expect((await sendEvent(appUrl, signingSecret, message, { retryNum: 1 })).status).toBe(200);
    expect(await messageSeen.promise).toMatchObject({ event: { text: 'more' }, retryNum: 1 });

    const payload = {
      type: 'block_actions',
      team: { id: 'T0TEAM', domain: 'acme' },
      user: { id: 'U1', team_id: 'T0TEAM' },
      api_app_id: 'A0APP',
      trigger_id: '1.2.3',
      channel: { id: 'C1' },
      actions: [{ type: 'button', action_id: 'cancel_job', block_id: 'b', value: 'job-1', action_ts: '1.2' }],
    };
    expect((await sendInteraction(appUrl, signingSecret, payload)).status).toBe(200);
    expect(await actionSeen.promise).toMatchObject({ value: 'job-1' });
  });
});

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
