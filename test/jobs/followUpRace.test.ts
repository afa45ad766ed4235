import { describe, expect, it } from 'vitest';
import { startBot } from '../support/botHarness.js';
import {
  cardEdits,
  FAST_POLL,
  getJobRequests,
  record,
  replyInThread,
  settle,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/42';
const ALICE = 'U0ALICE';

describe('a follow-up sent while a check is ending the job', () => {
  it('keeps following the job the follow-up set working again', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');

      // The check that reads the job's end is held while it redraws the card...
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.slack.failNext('chat.update', { until: held, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);

      // ...and meanwhile the requester steers the job: Mintlify takes the follow-up up at once
      // (the fake answers it `active`, as the spec has it for a reopened job).
      await replyInThread(h, job, 'Also add an example with curl');
      expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(1);
      release();
      await waitForReply(h, job, PR);

      // Mintlify says the job is working on the follow-up: the bot must still follow it.
      await settle(h, sentinel, 5);
      const reads = getJobRequests(h, job.jobId).length;
      await settle(h, sentinel, 5);
      expect(getJobRequests(h, job.jobId).length).toBeGreaterThan(reads);
      expect((await record(h, job.jobId))?.status).toBe('active');
    } finally {
      await h.close();
    }
  });
  it('shows the job working on that follow-up, and tells the thread when the follow-up’s work ends', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');

      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.slack.failNext('chat.update', { until: held, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);
      // The requester steers the job as it ends; Mintlify takes the follow-up up (answers `active`).
      await replyInThread(h, job, 'Also add an example with curl');
      release();
      await waitForReply(h, job, PR);
      await settle(h, sentinel, 5);

      // Mintlify says the job is working on the follow-up: so must the card, not "Pull request ready".
      const lastCard = () => JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks);
      const cardWhileWorking = lastCard();

      // The agent is done with the follow-up: the thread is told, as for any follow-up's round.
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await settle(h, sentinel, 5);
      const ends = threadReplies(h, job).filter((call) => textOf(call).includes(PR));
      expect(ends.map(textOf)).toEqual([
        expect.stringContaining('The docs agent is done: pull request'),
        expect.stringContaining('The docs agent is done with the latest replies'),
      ]);
      expect(cardWhileWorking).toContain('Working on it');
    } finally {
      await h.close();
    }
  });
  it('shows the job working on a follow-up Mintlify answered with the end being told', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');

      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.slack.failNext('chat.update', { until: held, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);
      // The agent takes the follow-up up in the background: Mintlify answers it with the job's end.
      h.mintlify.takeUpFollowUpsLater();
      await replyInThread(h, job, 'Also add an example with curl');
      release();
      await settle(h, sentinel, 5);

      // The reply reopened the job: its card says so, not "Pull request ready".
      const lastCard = () => JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks);
      expect(lastCard()).toContain('Working on it');

      // The agent takes it up, then is done with it: the thread is told of that round's end.
      h.mintlify.setJob(job.jobId, { status: 'active', prLink: null });
      await settle(h, sentinel, 5);
      expect(lastCard()).toContain('Working on it');
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, 'The docs agent is done with the latest replies');
      await settle(h, sentinel, 5);
      // The first round's end was not posted: the reply had reopened the job before it could be.
      expect(threadReplies(h, job).filter((call) => textOf(call).includes(PR))).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('tells the end of the round it opened to those who steered that round, not those of the round before', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');
      // Alice steers the first round while it works.
      await replyInThread(h, job, 'Mention the default timeout too', ALICE);
      expect((await record(h, job.jobId))?.steeredBy).toContain(ALICE);

      // The first round ends; as its end is told, the requester replies (Mintlify takes it up at once).
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.slack.failNext('chat.update', { until: held, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);
      await replyInThread(h, job, 'Also add an example with curl');
      release();
      await waitForReply(h, job, PR);
      await settle(h, sentinel, 5);

      // The requester's round ends: Alice, who did not steer it, is not pinged for it.
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, 'The docs agent is done with the latest replies');
      const ends = threadReplies(h, job)
        .filter((call) => textOf(call).includes(PR))
        .map(textOf);
      expect(ends[0]).toContain(`<@${ALICE}>`); // the first round's end: she steered it
      expect(ends.at(-1)).not.toContain(`<@${ALICE}>`);
    } finally {
      await h.close();
    }
  });
  it("pings at the new round's end someone who steered the round before and replied again as it ended", async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');
      // Alice steers the first round while it works.
      await replyInThread(h, job, 'Mention the default timeout too', ALICE);
      expect((await record(h, job.jobId))?.steeredBy).toContain(ALICE);

      // The first round ends; as its end is told, Alice replies again (Mintlify takes it up at once).
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.slack.failNext('chat.update', { until: held, channel: job.channel });
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);
      await replyInThread(h, job, 'Also add an example with curl', ALICE);
      release();
      await waitForReply(h, job, PR);
      await settle(h, sentinel, 5);

      // The round Alice's second reply opened ends: she asked for its work, so she is pinged.
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, 'The docs agent is done with the latest replies');
      const ends = threadReplies(h, job)
        .filter((call) => textOf(call).includes(PR))
        .map(textOf);
      expect(ends.at(-1)).toContain(`<@${ALICE}>`);
    } finally {
      await h.close();
    }
  });
});
