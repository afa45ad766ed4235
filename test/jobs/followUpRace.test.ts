import { describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { heldStep } from '../support/leases.js';
import {
  cardEdits,
  FAST_POLL,
  getJobRequests,
  record,
  REQUESTER,
  replyInThread,
  requestsForJob,
  settle,
  startFollowedJob,
  type StartedJob,
  textOf,
  threadReplies,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/42';
const ALICE = 'U0ALICE';
const CAT = 'U0CAT';

/**
 * The job ends, and the check telling it is held at its card edit (Slack slow) while `reply` is
 * sent: a follow-up that reaches the job as its end is being told. The edit goes on after it.
 */
async function replyAsTheEndIsTold(
  h: BotHarness,
  job: StartedJob,
  reply: () => Promise<void>,
): Promise<void> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  h.slack.failNext('chat.update', { until: held, channel: job.channel });
  h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
  await h.slack.waitForCall('chat.update', (call) => call.args.ts === job.cardTs);
  await reply();
  release();
}

describe('a follow-up sent while a check is ending the job', () => {
  it('keeps following the job the follow-up set working again', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the retry flag');

      // The requester steers the job as a check tells its end: Mintlify takes the follow-up up at
      // once (the fake answers it `active`, as the spec has it for a reopened job).
      await replyAsTheEndIsTold(h, job, async () => {
        await replyInThread(h, job, 'Also add an example with curl');
        expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(1);
      });
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

      // The requester steers the job as it ends; Mintlify takes the follow-up up (answers `active`).
      await replyAsTheEndIsTold(h, job, () => replyInThread(h, job, 'Also add an example with curl'));
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

      // The agent takes the follow-up up in the background: Mintlify answers it with the job's end.
      await replyAsTheEndIsTold(h, job, async () => {
        h.mintlify.takeUpFollowUpsLater();
        await replyInThread(h, job, 'Also add an example with curl');
      });
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

  it.each([
    ['the requester', REQUESTER, false],
    ['Alice again', ALICE, true],
  ])(
    'tells the end of the round a racing reply opened to its author, and to who steered the round before only if that is them (%s)',
    async (_, replier, alicePinged) => {
      const h = await startBot({ env: FAST_POLL });
      try {
        const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
        const job = await startFollowedJob(h, 'Document the retry flag');
        // Alice steers the first round while it works.
        await replyInThread(h, job, 'Mention the default timeout too', ALICE);
        expect((await record(h, job.jobId))?.steeredBy).toContain(ALICE);

        // The first round ends; as its end is told, someone replies (Mintlify takes it up at once).
        await replyAsTheEndIsTold(h, job, () =>
          replyInThread(h, job, 'Also add an example with curl', replier),
        );
        await waitForReply(h, job, PR);
        await settle(h, sentinel, 5);

        // The round the reply opened ends: its author is pinged; Alice only if she wrote it.
        h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
        await waitForReply(h, job, 'The docs agent is done with the latest replies');
        const ends = threadReplies(h, job)
          .filter((call) => textOf(call).includes(PR))
          .map(textOf);
        expect(ends[0]).toContain(`<@${ALICE}>`); // the first round's end: she steered it
        expect(ends.at(-1)).toContain(`<@${replier}>`);
        expect(ends.at(-1)?.includes(`<@${ALICE}>`)).toBe(alicePinged);
      } finally {
        await h.close();
      }
    },
  );

  it.each([
    [
      'before the follower read it',
      async (h: BotHarness, job: StartedJob, reply: () => Promise<void>) => {
        const reads = heldStep();
        h.mintlify.injectFault(requestsForJob(job.jobId), { until: reads.until }, 10_000);
        h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
        await reply();
        reads.release();
        h.mintlify.clearFaults();
      },
    ],
    ['as it was being told', replyAsTheEndIsTold],
  ])(
    'tells whoever steered a round whose end a reply reopened untold, with the reply’s round (%s)',
    async (_, endWithReply) => {
      const h = await startBot({ env: FAST_POLL });
      try {
        const job = await startFollowedJob(h, 'Document the retry flag');
        // Alice steers the first round while it works.
        await replyInThread(h, job, 'Mention the default timeout too', ALICE);
        expect((await record(h, job.jobId))?.steeredBy).toEqual([ALICE]);

        // The round ends with Alice's change; Cat replies before its end reaches the thread, and
        // Mintlify answers the reply with the job as it ended (the agent takes it up in the background).
        h.mintlify.takeUpFollowUpsLater();
        await endWithReply(h, job, () => replyInThread(h, job, 'Also add an example with curl', CAT));
        await expect.poll(async () => (await record(h, job.jobId))?.round).toBe(1);

        // The agent takes Cat's reply up, and is done again on the same pull request.
        h.mintlify.setJob(job.jobId, { status: 'active', prLink: null });
        await expect.poll(async () => (await record(h, job.jobId))?.followUp).toBeUndefined();
        h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
        const end = textOf(await waitForReply(h, job, 'The docs agent is done with the latest replies'));

        // The thread heard of one end, which has Alice's change too: she is told of it with Cat.
        const ends = threadReplies(h, job).filter((call) => textOf(call).includes(PR));
        expect(ends).toHaveLength(1);
        expect(end).toContain(`<@${REQUESTER}>`);
        expect(end).toContain(`<@${ALICE}>`);
        expect(end).toContain(`<@${CAT}>`);
      } finally {
        await h.close();
      }
    },
  );
});
