import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import {
  cardEdits,
  FAST_POLL,
  getJobRequests,
  record,
  REQUESTER,
  replyInThread,
  settle,
  type StartedJob,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForCardEdit,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/42';

describe('following a job to its end', () => {
  let h: BotHarness;
  let sentinel: StartedJob;

  beforeAll(async () => {
    h = await startBot({ env: FAST_POLL });
    // Stays active all along: its checks are the clock the tests settle on.
    sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
  });
  afterAll(() => h.close());

  it('edits the card with the pull request and replies once, mentioning the requester, when the job completes', async () => {
    const job = await startFollowedJob(h, 'Document the dry-run flag');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    const edit = await waitForCardEdit(h, job, PR);
    expect(JSON.stringify(edit.args.blocks)).toContain('Open pull request');
    expect(textOf(edit)).toContain('Pull request ready');
    const reply = await waitForReply(h, job, PR);
    expect(textOf(reply)).toContain(`<@${REQUESTER}>`);
    // Nor does Slack unfurl the pull request under the reply: the card already shows it.
    expect([reply.args.unfurl_links, reply.args.unfurl_media].map(String)).toEqual(['false', 'false']);

    const polls = getJobRequests(h, job.jobId).length;
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect(cardEdits(h, job)).toHaveLength(1);
    expect(getJobRequests(h, job.jobId)).toHaveLength(polls); // no longer followed
    expect(await record(h, job.jobId)).toMatchObject({
      status: 'completed',
      prLink: PR,
      announced: ['0:completed'],
    });
  });

  it('redraws the card when Mintlify names the job’s branch while it works, not only at its end', async () => {
    const job = await startFollowedJob(h, 'Document the branch naming');
    // `source.ref` is nullable in the spec (the agent names its branch from the prompt): here
    // Mintlify answers it, or a new one, only once the agent is under way.
    h.mintlify.setJob(job.jobId, { source: { ref: 'docs/branch-naming' } });
    await expect.poll(async () => (await record(h, job.jobId))?.ref).toBe('docs/branch-naming');
    await settle(h, sentinel);
    // Still working: the card says where, as the record already does.
    expect((await record(h, job.jobId))?.status).toBe('active');
    expect(JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks ?? [])).toContain('docs/branch-naming');
  });

  it('says plainly that nothing changed when the job completes without a pull request', async () => {
    const job = await startFollowedJob(h, 'Check the quickstart for typos');
    h.mintlify.setJob(job.jobId, { status: 'completed' });

    await waitForCardEdit(h, job, 'no changes needed');
    const reply = await waitForReply(h, job, 'no pull request');
    expect(textOf(reply)).toContain(`<@${REQUESTER}>`);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('tells the requester what to do when the job fails', async () => {
    const job = await startFollowedJob(h, 'Rewrite the API reference');
    h.mintlify.setJob(job.jobId, { status: 'failed' });

    await waitForCardEdit(h, job, 'Failed');
    const reply = await waitForReply(h, job, 'failed');
    expect(textOf(reply)).toContain('A reply in this thread still goes to the agent');
    expect(textOf(reply)).toContain('/docs-agent');
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('says so once when the job is archived', async () => {
    const job = await startFollowedJob(h, 'Document the old v1 endpoints');
    h.mintlify.setJob(job.jobId, { status: 'archived' });

    await waitForCardEdit(h, job, 'Archived');
    await waitForReply(h, job, 'archived');
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect((await record(h, job.jobId))?.status).toBe('archived');
  });

  it('links the pull request of an archived job that opened one', async () => {
    const job = await startFollowedJob(h, 'Document the old v2 endpoints');
    h.mintlify.setJob(job.jobId, { status: 'archived', prLink: PR });

    const reply = await waitForReply(h, job, 'archived');
    expect(textOf(reply)).toContain(`Its work so far is in pull request <${PR}|acme/docs#42>.`);
  });

  it('follows a job reopened by a follow-up and announces its new end too', async () => {
    const job = await startFollowedJob(h, 'Document rate limits');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    // The record is saved just after the reply is posted.
    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');

    await replyInThread(h, job, 'Also add an example with curl');
    expect((await record(h, job.jobId))?.round).toBe(1);
    // The card no longer shows the first round's ending, but still the pull request, which Mintlify
    // reads as null while the job works again.
    const working = await h.slack.waitForCall(
      'chat.update',
      (call) =>
        call.args.ts === job.cardTs && call.response.ok === true && textOf(call).includes('Working on it'),
    );
    expect(h.mintlify.jobs.get(job.jobId)?.prLink).toBeNull();
    expect(JSON.stringify(working.args.blocks)).toContain('Open pull request');
    expect(threadReplies(h, job)).toHaveLength(1);

    h.mintlify.setJob(job.jobId, { status: 'completed' });
    await h.slack.waitForCalls(
      'chat.postMessage',
      2,
      (call) => call.args.thread_ts === job.cardTs && call.response.ok === true && textOf(call).includes(PR),
    );
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(2);
    expect((await record(h, job.jobId))?.announced).toEqual(['0:completed', '1:completed']);
  });

  it('redraws a reopened job’s card once, not again at every check while it works', async () => {
    const job = await startFollowedJob(h, 'Document webhooks');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');

    await replyInThread(h, job, 'Also document the retries');
    await waitForCardEdit(h, job, 'Working on it');
    // A couple of checks of the reopened job: the first one redraws its card.
    const reads = getJobRequests(h, job.jobId).length;
    await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(reads + 2);
    const edits = cardEdits(h, job).length;

    await settle(h, sentinel, 5);
    expect(getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(reads + 5);
    expect(cardEdits(h, job)).toHaveLength(edits);
  });
});

describe('a follow-up the agent takes up in the background', () => {
  // The job still reads as it ended before, for a while after the follow-up's answer.
  const finishThenReply = async (h: BotHarness, job: StartedJob) => {
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
    h.mintlify.takeUpFollowUpsLater();
    await replyInThread(h, job, 'Also add an example with curl');
  };

  it('follows the job as reopened, and does not take its old end for the new round’s', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document rate limits');
      await finishThenReply(h, job);
      expect(await record(h, job.jobId)).toMatchObject({ status: 'active', round: 1 });
      expect((await record(h, job.jobId))?.followUp).toBeDefined();
      await waitForCardEdit(h, job, 'Working on it');

      // Mintlify still answers with the first round's end: the job is read, nothing is announced.
      const reads = getJobRequests(h, job.jobId).length;
      await settle(h, sentinel);
      expect(getJobRequests(h, job.jobId).length).toBeGreaterThan(reads);
      expect(threadReplies(h, job)).toHaveLength(1);
      expect((await record(h, job.jobId))?.status).toBe('active');

      // The agent takes it up, then finishes on the same pull request: that end is announced.
      h.mintlify.setJob(job.jobId, { status: 'active', prLink: null });
      await expect
        .poll(async () => (await record(h, job.jobId))?.followUp, { timeout: 10_000 })
        .toBeUndefined();
      h.mintlify.setJob(job.jobId, { status: 'completed' });
      await expect.poll(() => threadReplies(h, job).length, { timeout: 10_000 }).toBe(2);
      expect(textOf(threadReplies(h, job)[1]!)).toContain(PR);
      // The record is saved just after the reply is posted.
      await expect
        .poll(() => record(h, job.jobId))
        .toMatchObject({ status: 'completed', announced: ['0:completed', '1:completed'] });
    } finally {
      await h.close();
    }
  });

  it('believes the old end once the agent has had its while', async () => {
    const h = await startBot({ env: FAST_POLL, followUpGraceMs: 300 });
    try {
      const job = await startFollowedJob(h, 'Document retries');
      await finishThenReply(h, job);
      // The follow-up changed nothing Mintlify shows: the new round ends as the old one did.
      await expect.poll(() => threadReplies(h, job).length, { timeout: 10_000 }).toBe(2);
      expect(textOf(threadReplies(h, job)[1]!)).toContain(PR);
      await expect
        .poll(() => record(h, job.jobId))
        .toMatchObject({
          status: 'completed',
          round: 1,
          announced: ['0:completed', '1:completed'],
        });
      expect((await record(h, job.jobId))?.followUp).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});

describe('following a job with the in-memory store', () => {
  it('announces the end once, as with Redis', async () => {
    const h = await startBot({ env: FAST_POLL, memory: true });
    try {
      const sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
      const job = await startFollowedJob(h, 'Document the CLI');
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, PR);
      await settle(h, sentinel);
      expect(threadReplies(h, job)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
