import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SOMETHING_WRONG } from '../../src/jobs/doorAnswers.js';
import {
  cardEdits,
  FAST_POLL,
  record,
  settle,
  type StartedJob,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForCardEdit,
  waitForReply,
} from '../jobs/followSupport.js';
import { type BotHarness, startBot } from '../support/botHarness.js';

/**
 * Slack's Web API refusing the bot's calls: the card's post, its edits, the final reply, the
 * answers to a person and the ✅. Each is handled as the person would expect, none crashes the
 * bot, and nothing is posted twice. (A deleted card, a deleted thread, an archived channel on an
 * edit and a card refused with not_in_channel are in test/jobs/followJobsSlack.test.ts.)
 */

const PR = 'https://github.com/acme/docs/pull/12';
// One more failure than the harness's WebClient retries (2): the bot itself sees the failure.
const PAST_RETRIES = 3;

let h: BotHarness;
let sentinel: StartedJob;
beforeAll(async () => {
  h = await startBot({ env: FAST_POLL });
  sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
});
afterAll(async () => {
  // Still answering after everything below.
  expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
  await h?.close();
});

const inChannel = (channel: string) =>
  h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === channel);
const cardsIn = (channel: string) =>
  h.slack.history(channel).filter((message) => !message.thread_ts || message.thread_ts === message.ts);
const jobIn = async (channel: string) => (await h.bot.context.jobs.records.recentInChannel(channel, 1))[0];
/**
 * `/docs-agent <text>` in `channel`; resolves once its work is done, with what the person was told
 * through the response URL after the acknowledgement (undefined: nothing, the card said it all).
 */
async function command(channel: string, text: string) {
  const responseId = `${channel}-${text}`;
  await h.command(text, { channel_id: channel, response_url: h.slack.responseUrl(responseId) });
  await h.bot.drained();
  const answers = h.slack.callsTo('response_url').filter((call) => call.responseId === responseId);
  expect(answers.length).toBeLessThanOrEqual(1);
  return answers[0]?.args;
}

describe('the job card', () => {
  it('rate limited with Retry-After: posted once, after the wait', async () => {
    h.slack.failNext('chat.postMessage', { status: 429, retryAfter: 1, channel: 'C0RATE' });
    const answer = await command('C0RATE', 'Document the retry flag');
    expect(answer).toBeUndefined();
    expect(inChannel('C0RATE').map((call) => call.status)).toEqual([429, 200]);
    expect(cardsIn('C0RATE')).toHaveLength(1);
  });

  it('Slack failing (5xx) past the retries: the person is told the card will follow; it does, once, and the job is followed', async () => {
    h.slack.failNext('chat.postMessage', { status: 500, channel: 'C0OUTAGE' }, PAST_RETRIES);
    const answer = await command('C0OUTAGE', 'Document the outage page');
    expect(String(answer?.text)).toContain('Slack did not take its card just now');

    await expect.poll(() => cardsIn('C0OUTAGE')).toHaveLength(1);
    await expect.poll(async () => (await jobIn('C0OUTAGE'))?.cardTs).toBe(cardsIn('C0OUTAGE')[0]?.ts);
    const job = await jobIn('C0OUTAGE');
    const started = { jobId: job?.jobId as string, channel: 'C0OUTAGE', cardTs: job?.cardTs as string };
    h.mintlify.setJob(started.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, started, PR);
    await settle(h, sentinel, 2);
    expect(cardsIn('C0OUTAGE')).toHaveLength(1);
    expect(threadReplies(h, started)).toHaveLength(1);
  });

  it.each(['channel_not_found', 'is_archived'])(
    '%s: the job moves to the person’s DM, where its end is told; nothing more is tried in the channel',
    async (error) => {
      const channel = `C0${error.toUpperCase().replaceAll('_', '')}`;
      const instruction = `Document the changelog (${error})`;
      h.slack.failNext('chat.postMessage', { error, channel });
      const answer = await command(channel, instruction);
      expect(answer).toMatchObject({ response_type: 'ephemeral' });
      expect(String(answer?.text)).toContain('it is in our DM');
      // Inviting the bot helps where it is not a member, not in a channel that takes no posts.
      expect(String(answer?.text).includes('/invite @docs-agent')).toBe(error === 'channel_not_found');
      const dmCard = await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.channel === 'U0USER' && JSON.stringify(call.args.blocks).includes(instruction),
      );
      const cardTs = String(dmCard.response.ts);
      const job = await vi.waitFor(
        async () => {
          const found = await h.bot.context.jobs.records.byThread(String(dmCard.response.channel), cardTs);
          if (!found) throw new Error('the DM card is not on the record yet');
          return found;
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(job.pendingCard).toBeUndefined();

      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.args.thread_ts === cardTs && textOf(call).includes(PR),
      );
      await settle(h, sentinel, 2);
      expect(h.slack.calls.filter((call) => call.args.channel === channel)).toHaveLength(1);
    },
  );

  it('invalid_blocks (the bot’s own bug): the card goes out as plain text, and its thread is the job’s', async () => {
    h.slack.failNext('chat.postMessage', { error: 'invalid_blocks', channel: 'C0BLOCKS' });
    const answer = await command('C0BLOCKS', 'Document the blocks');
    expect(answer).toBeUndefined();
    const [refused, posted] = inChannel('C0BLOCKS');
    expect(refused?.args.blocks).toBeDefined();
    expect(posted?.args.blocks).toBeUndefined();
    expect(textOf(posted as NonNullable<typeof posted>)).toContain('Document the blocks');
    expect(h.logs.filter((line) => line.includes('Slack refused the blocks'))).toHaveLength(1);
    const job = await jobIn('C0BLOCKS');
    expect(job?.threadTs).toBe(posted?.response.ts);
  });
});

describe('editing the card', () => {
  it('rate limited with Retry-After: the card shows the pull request after the wait', async () => {
    const job = await startFollowedJob(h, 'Document the rate limits', 'C0EDITRATE');
    h.slack.failNext('chat.update', { status: 429, retryAfter: 1, channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForCardEdit(h, job, PR);
    // Refused once, then taken once Slack's Retry-After (1 s) has passed, not sooner. The floor is the
    // behaviour, not a speed claim: a slow machine only widens the gap, and a bot that did not wait
    // would ask again within its own backoff (tens of ms here) or at its next check (300 ms at most).
    const edits = h.slack.callsTo('chat.update').filter((call) => call.args.ts === job.cardTs);
    expect(edits.map((call) => call.status)).toEqual([429, 200]);
    expect(edits[1]!.at - edits[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it('Slack failing (5xx) past the retries: the next check edits it', async () => {
    const job = await startFollowedJob(h, 'Document the status page', 'C0EDITOUTAGE');
    h.slack.failNext('chat.update', { status: 503, channel: job.channel }, PAST_RETRIES);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForCardEdit(h, job, PR);
    expect(h.slack.callsTo('chat.update').filter((call) => call.status === 503)).toHaveLength(PAST_RETRIES);
  });

  it.each(['channel_not_found', 'not_in_channel'])(
    '%s: the bot stops posting there, keeps the record, and says so once in the log',
    async (error) => {
      const job = await startFollowedJob(
        h,
        `Document the ${error} case`,
        `C0EDIT${error.replace(/_/g, '').toUpperCase()}`,
      );
      h.slack.failNext('chat.update', { error, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
      await settle(h, sentinel, 2);
      expect(threadReplies(h, job)).toHaveLength(0);
      expect(h.logs.filter((line) => line.includes(`job ${job.jobId} is still followed`))).toHaveLength(1);
    },
  );

  it('invalid_blocks: the card is shown as plain text instead of failing at every check', async () => {
    const job = await startFollowedJob(h, 'Document the card layout', 'C0EDITBLOCKS');
    h.slack.failNext('chat.update', { error: 'invalid_blocks', channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await settle(h, sentinel, 2);
    const [edit, ...more] = cardEdits(h, job);
    expect(edit?.args.blocks).toEqual([]);
    expect(textOf(edit as NonNullable<typeof edit>)).toContain('Pull request ready');
    expect(more).toHaveLength(0);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('stored by Slack, then answered 503: not posted again blind; found by its mark and followed', async () => {
    h.slack.failNext('chat.postMessage', { status: 503, landed: true, channel: 'C0LANDED' });
    await command('C0LANDED', 'Document the landed card');
    await expect.poll(async () => (await jobIn('C0LANDED'))?.cardTs).toBe(cardsIn('C0LANDED')[0]?.ts);
    await settle(h, sentinel, 2);
    expect(cardsIn('C0LANDED')).toHaveLength(1);
  });
});

describe('the final reply', () => {
  it('rate limited with Retry-After: posted once, after the wait', async () => {
    const job = await startFollowedJob(h, 'Document the webhooks', 'C0REPLYRATE');
    h.slack.failNext('chat.postMessage', { status: 429, retryAfter: 1, channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await settle(h, sentinel, 2);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('stored by Slack, then answered 503: not posted again blind; found by its mark', async () => {
    const job = await startFollowedJob(h, 'Document the landed reply', 'C0REPLYLANDED');
    h.slack.failNext('chat.postMessage', { status: 503, landed: true, channel: job.channel });
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    // Its next check finds the reply in the thread and notes it told.
    await expect.poll(async () => (await record(h, job.jobId))?.announced.length).toBe(1);
    await settle(h, sentinel, 2);
    const replies = h.slack
      .history(job.channel)
      .filter((message) => message.thread_ts === job.cardTs && message.ts !== job.cardTs);
    expect(replies).toHaveLength(1);
  });

  it.each(['channel_not_found', 'is_archived', 'not_in_channel'])(
    '%s: the end is recorded, the reply not tried for ever, and nothing else is posted there',
    async (error) => {
      const channel = `C0${error.replace(/_/g, '').toUpperCase()}`;
      const job = await startFollowedJob(h, `Document the final ${error}`, channel);
      // This job's channel only: the sentinel's posts, in another, may come first.
      h.slack.failNext('chat.postMessage', { error, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
      await settle(h, sentinel, 2);
      const tries = h.slack.callsTo('chat.postMessage').filter((call) => call.args.thread_ts === job.cardTs);
      expect(tries).toHaveLength(1);
      expect(h.logs.filter((line) => line.includes(`job ${job.jobId} is still followed`))).toHaveLength(1);
    },
  );
});

describe('answers to a person', () => {
  const reply = (job: StartedJob, text: string, ts: string) => ({
    type: 'message',
    channel: job.channel,
    channel_type: 'channel',
    user: 'U0BEA',
    text,
    ts,
    thread_ts: job.cardTs,
  });

  it.each([
    ['message_not_found', { error: 'message_not_found' }, 1, [200]],
    ['rate limited', { status: 429, retryAfter: 0 }, PAST_RETRIES, [429, 429, 429]],
    ['a 5xx', { status: 500 }, PAST_RETRIES, [500, 500, 500]],
  ] as const)(
    'a ✅ refused (%s) leaves the follow-up delivered, with a line in the log',
    async (_name, fault, times, statuses) => {
      const job = await startFollowedJob(h, 'Document the reactions');
      const before = h.mintlify.requestsFor('sendMessage').length;
      const reactions = h.slack.callsTo('reactions.add').length;
      const warnings = h.logs.filter((line) =>
        line.includes('could not mark a follow-up as delivered'),
      ).length;
      h.slack.failNext('reactions.add', fault, times);
      const event = reply(job, 'Add an example', `18000000${before}.000100`);
      await h.event(event);
      await expect.poll(() => h.mintlify.requestsFor('sendMessage').length).toBe(before + 1);
      await expect
        .poll(() => h.logs.filter((line) => line.includes('could not mark a follow-up as delivered')).length)
        .toBe(warnings + 1);
      const tries = h.slack.callsTo('reactions.add').slice(reactions);
      expect(tries.map((call) => call.status)).toEqual(statuses);
      expect(h.slack.message(job.channel, String(event.ts))?.reactions).toBeUndefined();
      // Every fault was used: the next ✅ is taken.
      await h.event(reply(job, 'And a second one', `18100000${before}.000100`));
      await expect.poll(() => h.slack.callsTo('reactions.add').at(-1)?.response.ok).toBe(true);
    },
  );

  it('an ephemeral answer Slack refuses is logged, and the bot keeps answering', async () => {
    const job = await startFollowedJob(h, 'Document the ephemeral answers');
    h.mintlify.injectFault('sendMessage', { status: 404 });
    h.slack.failNext('chat.postEphemeral', { error: 'channel_not_found' });
    await h.event(reply(job, 'Add an example', '1810000000.000100'));
    await expect
      .poll(() => h.logs.some((line) => line.includes(`could not answer a thread reply in ${job.channel}`)))
      .toBe(true);
    expect(h.logs.some((line) => line.includes('a thread reply could not be handled'))).toBe(false);
  });

  it('a response URL that refuses the answer: the job still started, and the person is not told it failed', async () => {
    // Slack busy at the card's post: the person is to be told the card will follow.
    h.slack.failNext('chat.postMessage', { status: 500, channel: 'C0EXPIRED' }, PAST_RETRIES);
    h.slack.failNext('response_url', { status: 404, error: 'expired_url' });
    await h.command('Document the response URL', {
      channel_id: 'C0EXPIRED',
      response_url: h.slack.responseUrl('expired'),
    });
    await expect.poll(() => cardsIn('C0EXPIRED')).toHaveLength(1);
    await expect
      .poll(() =>
        h.logs.some((line) => line.includes('could not answer the person through the response URL')),
      )
      .toBe(true);
    const answers = h.slack.callsTo('response_url').filter((call) => call.responseId === 'expired');
    expect(answers).toHaveLength(1);
    expect(answers.map((call) => call.args.text)).not.toContain(SOMETHING_WRONG);
  });
});
