import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { heldStep } from '../support/leases.js';
import {
  cardEdits,
  FAST_POLL,
  record,
  requestsForJob,
  settle,
  type StartedJob,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/99';

describe('following a job when Slack refuses a message', () => {
  let h: BotHarness;
  let sentinel: StartedJob;

  beforeAll(async () => {
    h = await startBot({ env: FAST_POLL });
    sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
  });
  afterAll(() => h.close());

  it('shows a pull request link too long for a button as text, and the card still takes', async () => {
    const job = await startFollowedJob(h, 'Document the long branch');
    const long = `https://github.com/acme/docs/pull/99?${'x'.repeat(3_000)}`;
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: long });
    await waitForReply(h, job, 'github.com/acme/docs/pull/99');
    const edit = cardEdits(h, job).find((call) =>
      JSON.stringify(call.args.blocks).includes('pull request https'),
    );
    expect(edit?.response.ok).toBe(true);
    expect(JSON.stringify(edit?.args.blocks)).not.toContain('Open pull request');
  });

  it('on a status Mintlify added after its spec, finds the card deleted: the end is posted in the thread, and the card asked for no more', async () => {
    const job = await startFollowedJob(h, 'Document the audit log', 'C0AUDIT');
    h.slack.failNext('chat.update', { error: 'message_not_found', channel: job.channel });
    // The card of a job that still works changes with its status alone, and every status of the
    // spec but `active` ends the job: a status Mintlify adds later (shown on the card as given) is the
    // one change before the end. Its edit finds the card deleted.
    const answer = { ...h.mintlify.jobs.get(job.jobId), status: 'in_review' };
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 200, body: answer }, 2);
    await h.slack.waitForCall(
      'chat.update',
      (call) => call.args.ts === job.cardTs && call.response.error === 'message_not_found',
    );
    await expect
      .poll(() => h.logs.some((line) => line.includes(`the card of job ${job.jobId} was deleted`)))
      .toBe(true);

    // The end changes the card again: told in the thread, the deleted card not asked for.
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, 'is done');
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect(h.slack.callsTo('chat.update').filter((call) => call.args.ts === job.cardTs)).toHaveLength(1);
  });

  it('posts the news as a message of its own in a channel that takes no thread replies', async () => {
    const job = await startFollowedJob(h, 'Document the billing page', 'C0BILLING');
    // chat.postMessage's documented answer in a channel whose settings allow no threads.
    h.slack.failNext('chat.postMessage', {
      error: 'restricted_action_non_threadable_channel',
      channel: job.channel,
    });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    const stray = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === undefined && call.response.ok === true && textOf(call).includes(PR),
    );
    expect(textOf(stray)).toContain(job.jobId);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(0);
    expect((await record(h, job.jobId))?.announced).toEqual(['0:completed']);
  });

  // Slack answers a reply the thread will not take with these (chat.postMessage documents no
  // `thread_not_found`): an admin locked the card's thread, or someone deleted the card after a reply
  // and Slack left a tombstone. The channel itself still takes messages.
  it.each([
    ['restricted_action_thread_locked', 'C0LOCKED'],
    ['cannot_reply_to_message', 'C0TOMBSTONE'],
  ])('posts the news as a message of its own when the thread takes no reply (%s)', async (error, channel) => {
    const job = await startFollowedJob(h, `Document the ${error} page`, channel);
    if (error === 'restricted_action_thread_locked') {
      h.slack.lockThread(channel, job.cardTs);
    } else {
      h.slack.seedMessage(channel, { user: 'U0BEA', text: 'watching this', thread_ts: job.cardTs });
      h.slack.deleteMessage(channel, job.cardTs);
    }
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === job.cardTs && call.response.error === error,
    );
    const stray = await h.slack.waitForCall(
      'chat.postMessage',
      (call) =>
        call.args.channel === channel &&
        call.args.thread_ts === undefined &&
        call.response.ok === true &&
        textOf(call).includes(PR),
    );
    expect(textOf(stray)).toContain(job.jobId);
    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
    expect((await record(h, job.jobId))?.announced).toEqual(['0:completed']);
  });

  it.each([
    ['is_archived', 'C0TEAMS'],
    // A channel where only some may post (an announcement channel, a read-only Slack Connect one).
    ['restricted_action', 'C0READONLY'],
  ])('keeps the record but stops posting when the channel refuses for good (%s)', async (error, channel) => {
    const job = await startFollowedJob(h, `Document the teams API (${error})`, channel);
    h.slack.failNext('chat.update', { error, channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(0);
    expect((await record(h, job.jobId))?.prLink).toBe(PR);
    expect(h.logs.filter((line) => line.includes(`job ${job.jobId} is still followed`))).toHaveLength(1);
  });

  it('never drops the final reply when Slack fails to take it: the next check posts it', async () => {
    const job = await startFollowedJob(h, 'Document the search page', 'C0SEARCH');
    // More failures than the WebClient retries, so the first check gives up on the reply.
    h.slack.failNext('chat.postMessage', { status: 500, error: 'internal_error', channel: job.channel }, 4);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await waitForReply(h, job, PR);
    expect(
      h.slack.callsTo('chat.postMessage').filter((call) => call.args.thread_ts === job.cardTs).length,
    ).toBeGreaterThan(1);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect(cardEdits(h, job).length).toBeGreaterThanOrEqual(1);
  });

  it('once the card says the pull request is ready, `/docs-agent status` says so too, while Slack is slow to take the thread’s news', async () => {
    const job = await startFollowedJob(h, 'Document the webhooks page', 'C0HOOKS');
    const notice = heldStep();
    h.slack.failNext('chat.postMessage', { until: notice.until, channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await h.slack.waitForCall(
      'chat.update',
      (call) =>
        call.args.ts === job.cardTs && JSON.stringify(call.args.blocks).includes('Pull request ready'),
    );
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.thread_ts === job.cardTs);
    // The card in the channel reads “✅ Pull request ready”: the person asks for the channel’s jobs.
    await h.command('status', { channel_id: job.channel, response_url: h.slack.responseUrl('hooks-status') });
    const listed = await h.slack.waitForCall('response_url', (call) => call.responseId === 'hooks-status');
    notice.release();
    expect(JSON.stringify(listed.args.blocks)).toContain('Pull request ready');
    await waitForReply(h, job, PR);
  });

  it('follows a job whose card was never posted, keeping only its record up to date', async () => {
    const channel = 'C0NOTMEMBER';
    // Neither the channel nor the person's DM takes it.
    h.slack.setBotMember(channel, false);
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel', channel: 'U0USER' });
    await h.command('Document the changelog', { channel_id: channel });
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === channel);
    const jobId = [...h.mintlify.jobs.keys()].at(-1) as string;
    await expect.poll(async () => (await record(h, jobId))?.threadTs).toBeNull();

    h.mintlify.setJob(jobId, { status: 'completed', prLink: PR });
    await expect.poll(async () => (await record(h, jobId))?.status).toBe('completed');
    expect((await record(h, jobId))?.prLink).toBe(PR);
    await settle(h, sentinel);
    const inChannel = h.slack.calls.filter((call) => call.args.channel === channel);
    expect(inChannel).toHaveLength(1); // the refused card, nothing since
  });
});
