import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_POLL, startFollowedJob, waitForReply } from '../jobs/followSupport.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';

/**
 * A whole story with known secret values: a job started, steered and finished, a digest, and
 * things going wrong on the way. The harness's logger does not redact (on purpose), so a secret
 * that leaks at its source is caught here: none may appear in a log line, in anything sent to
 * Slack (Web API arguments, response URL bodies), or in anything sent to Mintlify other than the
 * Authorization header.
 */

const PR = 'https://github.com/acme/docs/pull/64';
const secrets = Object.entries(SECRETS);

let h: BotHarness;
beforeAll(async () => {
  h = await startBot({ env: { ...FAST_POLL, LOG_LEVEL: 'debug' } });
  h.mintlify.setVisitors([
    { path: '/quickstart', human: 120, ai: 30, total: 150 },
    { path: '/api/auth', human: 40, ai: 12, total: 52 },
  ]);

  // A job: started, steered in its thread, finished with a pull request.
  const job = await startFollowedJob(h, 'Document the API keys page');
  await h.event({
    type: 'message',
    channel: job.channel,
    channel_type: 'channel',
    user: 'U0BEA',
    text: 'Also mention key rotation',
    ts: '1830000000.000100',
    thread_ts: job.cardTs,
  });
  await h.slack.waitForCall('reactions.add');
  h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
  await waitForReply(h, job, PR);

  // A digest.
  await h.command('digest', { channel_id: 'C0DIGEST' });
  await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0DIGEST');

  // Errors: Mintlify refuses the key (start and follow-up), Slack refuses a post, Mintlify breaks.
  h.mintlify.injectFault('createJob', { status: 401 });
  await h.command('Document the errors page', { response_url: h.slack.responseUrl('refused') });
  await h.slack.waitForCall('response_url', (call) => call.responseId === 'refused');
  h.mintlify.injectFault('sendMessage', { status: 401 });
  await h.event({
    type: 'message',
    channel: job.channel,
    channel_type: 'channel',
    user: 'U0BEA',
    text: 'One more thing',
    ts: '1830000000.000200',
    thread_ts: job.cardTs,
  });
  await h.slack.waitForCall('chat.postEphemeral');
  const other = await startFollowedJob(h, 'Document the broken page');
  h.mintlify.injectFault('getJob', { status: 500, body: { error: `key ${SECRETS.mintlifyKey} is bad` } }, 3);
  h.slack.failNext('chat.update', { error: 'invalid_auth' });
  h.mintlify.setJob(other.jobId, { status: 'failed' });
  await waitForReply(h, other, 'failed');
  await h.bot.drained();
});
afterAll(() => h?.close());

describe('secrets never leave through the wrong door', () => {
  it.each(secrets)('%s is in no log line', (_name, secret) => {
    expect(h.logs.length).toBeGreaterThan(50);
    expect(h.logs.filter((line) => line.includes(secret))).toEqual([]);
  });

  it.each(secrets)('%s is in nothing sent to Slack, response URLs included', (_name, secret) => {
    expect(h.slack.callsTo('response_url').length).toBeGreaterThan(0);
    const leaks = h.slack.calls.filter((call) => JSON.stringify(call.args).includes(secret));
    expect(leaks.map((call) => call.method)).toEqual([]);
  });

  it.each(secrets)('%s reaches Mintlify only as the Authorization header', (_name, secret) => {
    for (const request of h.mintlify.requests) {
      const { authorization, ...headers } = request.headers;
      const elsewhere = JSON.stringify([request.path, request.query, request.rawBody, headers]);
      expect(elsewhere).not.toContain(secret);
      expect(authorization).toBe(`Bearer ${SECRETS.mintlifyKey}`);
    }
  });

  it('the story covered every operation', () => {
    const operations = new Set(h.mintlify.requests.map((request) => request.operation));
    expect([...operations].sort()).toEqual([
      'assistant',
      'createJob',
      'feedbackByPage',
      'getJob',
      'searches',
      'sendMessage',
      'visitors',
    ]);
  });
});
