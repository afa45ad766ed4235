import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fault } from '../fakes/mintlifyFake.js';
import {
  FAST_POLL,
  getJobRequests,
  requestsForJob,
  settle,
  type StartedJob,
  startFollowedJob,
  threadReplies,
  waitForReply,
} from '../jobs/followSupport.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';

/**
 * Mintlify misbehaving on each operation, for the faults the suites by feature leave out:
 * 429s, 5xx bursts and a schema-breaking job are in test/jobs/followJobsFaults.test.ts,
 * refusals and a timeout of the create in test/listeners/docsAgentCommand.test.ts, follow-ups
 * answered 429/404/503 in test/listeners/threadReply.test.ts, the visitors' 429s, 400s and 500s
 * in test/digest/. Whatever Mintlify does, the person gets a plain answer, nothing is sent
 * twice, and the bot keeps going.
 */

const PR = 'https://github.com/acme/docs/pull/55';
// Short client timeouts, so "slower than the timeout" costs a test a second or two, not fifteen; not so
// short that a healthy answer on a busy machine passes them. The fake drops a slow answer when it closes.
const TIMEOUT_MS = 1_500;
const SLOW: Fault = { delayMs: 15_000 };

let h: BotHarness;
let sentinel: StartedJob;
beforeAll(async () => {
  h = await startBot({
    env: FAST_POLL,
    mintlifyOptions: { timeouts: { headersMs: TIMEOUT_MS, bodyMs: TIMEOUT_MS } },
  });
  sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
});
afterAll(async () => {
  expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
  await h?.close();
});

/** A channel of the case's own, so what was posted there is the case's alone. */
const channelFor = (what: string, name: string) => `C0${what}${name}`.replace(/\W/g, '').toUpperCase();
const answerTo = async (responseId: string) =>
  (await h.slack.waitForCall('response_url', (call) => call.responseId === responseId)).args;

describe('creating a job', () => {
  it.each([
    ['malformed JSON', { malformedJson: true }],
    ['a body that breaks the schema', { schemaBreaking: true }],
    ['a connection cut after the request went out', { destroySocket: true }],
    ['a 500', { status: 500 }],
  ] as const)(
    'answered with %s: the person is told it may have started, and it is not asked again',
    async (name, fault) => {
      const channel = channelFor('create', name);
      const creates = h.mintlify.requestsFor('createJob').length;
      h.mintlify.injectFault('createJob', fault);
      await h.command('Document the import flag', {
        channel_id: channel,
        response_url: h.slack.responseUrl(name),
      });
      const answer = await answerTo(name);
      expect(String(answer.text)).toContain('It may have started anyway');
      // Slack keeps a command's text nowhere: the answer gives it back.
      expect(String(answer.text)).toContain('Your instruction was:\n>Document the import flag');
      expect(String(answer.text)).not.toContain(SECRETS.mintlifyKey);
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(creates + 1);
      expect(
        h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === channel),
      ).toHaveLength(0);
    },
  );

  it.each([
    ['401', 'refused the bot’s API key', 'check MINTLIFY_API_KEY: an admin key'],
    [
      '403',
      'did not allow the bot’s request',
      "check that MINTLIFY_PROJECT_ID is a project of the key's organization",
    ],
    ['404', 'could not find the docs project', 'check MINTLIFY_PROJECT_ID'],
  ] as const)(
    'refused with a %s: the person is told, and the log names the setting to check',
    async (status, told, hint) => {
      const channel = channelFor('refused', status);
      h.mintlify.injectFault('createJob', { status: Number(status) });
      await h.command('Document the export flag', {
        channel_id: channel,
        response_url: h.slack.responseUrl(channel),
      });
      expect(String((await answerTo(channel)).text)).toContain(told);
      await expect
        .poll(() => h.logs.filter((line) => line.includes(`in ${channel}:`) && line.includes(hint)))
        .toHaveLength(1);
    },
  );
});

describe('reading a job while following it', () => {
  it.each([
    ['slower than the timeout', SLOW],
    ['malformed JSON', { malformedJson: true }],
    ['a connection cut', { destroySocket: true }],
  ] as const)(
    'answered with %s, more than once: the job is still followed to its end, once',
    async (name, fault) => {
      const job = await startFollowedJob(h, `Document the export formats (${name})`);
      const before = getJobRequests(h, job.jobId).length;
      h.mintlify.injectFault(requestsForJob(job.jobId), fault, 2);
      await expect
        .poll(() => getJobRequests(h, job.jobId).length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(before + 2);
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, PR);
      await settle(h, sentinel, 2);
      expect(threadReplies(h, job)).toHaveLength(1);
    },
  );
});

describe('sending a follow-up', () => {
  let job: StartedJob;
  let nextTs = 1_820_000_000;
  beforeAll(async () => {
    job = await startFollowedJob(h, 'Document the follow-ups');
  });

  const replyInThread = async (text: string) => {
    nextTs += 1;
    await h.event({
      type: 'message',
      channel: job.channel,
      channel_type: 'channel',
      user: 'U0BEA',
      text,
      ts: `${nextTs}.000100`,
      thread_ts: job.cardTs,
    });
  };

  it.each([
    ['rate limited without Retry-After', { status: 429 }, 'limit of 100 agent uses per hour'],
    ['a 500', { status: 500 }, 'The job may have received it anyway'],
    ['slower than the timeout', SLOW, 'Mintlify did not answer in time'],
    ['malformed JSON', { malformedJson: true }, 'The job may have received it anyway'],
    ['a body that breaks the schema', { schemaBreaking: true }, 'The job may have received it anyway'],
  ] as const)(
    'answered with %s: the author alone is told, and it is sent once',
    async (name, fault, says) => {
      const sent = h.mintlify.requestsFor('sendMessage').length;
      const told = h.slack.callsTo('chat.postEphemeral').length;
      const delivered = h.slack.callsTo('reactions.add').length;
      h.mintlify.injectFault('sendMessage', fault);
      await replyInThread(`Add an example (${name})`);
      const [answer] = (await h.slack.waitForCalls('chat.postEphemeral', told + 1)).slice(told);
      expect(answer?.args).toMatchObject({ user: 'U0BEA', thread_ts: job.cardTs });
      expect(String(answer?.args.text)).toContain(says);
      expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(sent + 1);
      expect(h.slack.callsTo('reactions.add')).toHaveLength(delivered);
    },
  );
});

describe('reading the visitors for a digest', () => {
  it.each([
    ['slower than the timeout', SLOW],
    ['malformed JSON', { malformedJson: true }],
    ['a body that breaks the schema', { schemaBreaking: true }],
  ] as const)('answered with %s: a plain answer, one log line, and no half digest', async (name, fault) => {
    const channel = channelFor('digest', name);
    h.mintlify.setVisitors([{ path: '/quickstart', human: 10, ai: 2, total: 12 }]);
    h.mintlify.injectFault('visitors', fault, 100);
    const failures = h.logs.filter((line) => line.includes('was not posted')).length;
    await h.command('digest', { channel_id: channel, response_url: h.slack.responseUrl(`digest-${name}`) });
    const answer = await h.slack.waitForCall(
      'response_url',
      (call) => call.responseId === `digest-${name}` && call.args.text !== undefined,
    );
    expect(String(answer.args.text)).toContain('Mintlify’s analytics did not answer properly');
    expect(h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === channel)).toHaveLength(
      0,
    );
    expect(h.logs.filter((line) => line.includes('was not posted'))).toHaveLength(failures + 1);
    h.mintlify.clearFaults();
  });
});
