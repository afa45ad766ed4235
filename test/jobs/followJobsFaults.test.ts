import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import {
  FAST_POLL,
  getJobRequests,
  record,
  requestsForJob,
  settle,
  type StartedJob,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForCardEdit,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/7';

describe('following a job while Mintlify misbehaves', () => {
  let h: BotHarness;
  let sentinel: StartedJob;

  beforeAll(async () => {
    h = await startBot({ env: FAST_POLL });
    sentinel = await startFollowedJob(h, 'Sentinel job that never ends');
  });
  afterAll(() => h.close());

  it('says once that a job is gone when Mintlify no longer knows it, and stops asking', async () => {
    const job = await startFollowedJob(h, 'Document the export command');
    h.mintlify.jobs.delete(job.jobId);

    await waitForReply(h, job, 'no longer knows this job');
    const polls = getJobRequests(h, job.jobId).length;
    await settle(h, sentinel);
    expect(getJobRequests(h, job.jobId)).toHaveLength(polls);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect((await record(h, job.jobId))?.announced).toEqual(['0:gone']);
    // Off the unfinished list: a restart will not ask Mintlify about it again.
    expect(await h.bot.context.jobs.records.unfinishedIds()).not.toContain(job.jobId);
    // Its card (and so the Home tab and the status list, which read the same label) no longer says
    // it is working, nor that a reply steers it.
    const card = JSON.stringify(h.slack.message(job.channel, job.cardTs)?.blocks);
    expect(card).toContain('Gone from Mintlify');
    expect(card).not.toContain('Working on it');
    expect(card).not.toContain('Reply in this thread');
  });

  it('tries the gone job’s card edit again when Slack does not take it at first', async () => {
    const job = await startFollowedJob(h, 'Document the gone flag');
    // More failures than the harness's WebClient tries: the bot itself sees Slack fail the edit.
    h.slack.failNext('chat.update', { status: 500, channel: job.channel }, 6);
    h.mintlify.jobs.delete(job.jobId);
    await waitForReply(h, job, 'no longer knows this job');
    await expect
      .poll(() => JSON.stringify(h.slack.message(job.channel, job.cardTs)?.blocks))
      .toContain('Gone from Mintlify');
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('reads a job again after one 404 (Mintlify may not know a job it just created yet), and follows it on', async () => {
    const job = await startFollowedJob(h, 'Document the import command');
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 404 });
    await expect
      .poll(() => h.logs.some((line) => line.includes(`job ${job.jobId}: Mintlify answered 404`)))
      .toBe(true);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await waitForReply(h, job, PR);
    await settle(h, sentinel);
    expect(threadReplies(h, job).map(textOf).join('\n')).not.toContain('no longer knows this job');
    expect((await record(h, job.jobId))?.goneAt).toBeUndefined();
  });

  it('tells the thread once when Mintlify keeps refusing the key, and follows the job to its end once it works again', async () => {
    const job = await startFollowedJob(h, 'Document the key rotation');
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 401 }, 6);

    const told = await waitForReply(h, job, 'Mintlify refuses the bot’s requests');
    expect(textOf(told)).toContain('<@U0USER>');
    expect(textOf(told)).toContain('its API key is wrong or has expired');
    // The key works again once the faults are spent: the job's end is told as usual.
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(2);
    expect((await record(h, job.jobId))?.announced).toEqual(['0:refused', '0:completed']);
  });

  it('names the read scope when Mintlify answers 403 to the job reads of a key that just created the job', async () => {
    // The key created the job (POST: the write scope, from this server's address), so it is neither
    // wrong, nor expired, nor refused from this server: a 403 on its reads is a key without the read
    // scope (or a project not the key's). The log says so; the thread should not send the operator
    // looking for an expired key.
    const job = await startFollowedJob(h, 'Document the read scope');
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 403 }, 6);

    const told = await waitForReply(h, job, 'Mintlify refuses the bot’s requests');
    expect(h.logs.join('\n')).toContain('lacks the "read" scope');
    expect(textOf(told)).toContain('the API key lacks the read scope');
    expect(textOf(told)).not.toContain('expired');
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
  });

  it('slows down on a 429 with Retry-After and still sees the job complete', async () => {
    const job = await startFollowedJob(h, 'Document pagination');
    const readAt: number[] = [];
    const stop = h.mintlify.onAnswer((request) => {
      if (requestsForJob(job.jobId)(request)) readAt.push(Date.now());
    });
    // Answered reads only (the fake's listeners hear no fault): one before the 429, one after.
    await expect.poll(() => readAt.length).toBeGreaterThanOrEqual(1);
    const before = getJobRequests(h, job.jobId).length;
    const refusedFrom = readAt.length;
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 429, retryAfter: '1' });
    await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(before + 1);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    // After the Retry-After second: the project's checks paused instead of failing the job.
    await waitForReply(h, job, PR);
    stop();
    expect(h.logs.some((line) => line.includes('rate-limited job checks'))).toBe(true);
    // The job was read next only once the second had passed (checks are 100-200 ms apart here).
    const [lastBefore, firstAfter] = readAt.slice(refusedFrom - 1);
    expect(firstAfter! - lastBefore!).toBeGreaterThanOrEqual(1_000);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('slows down on a 429 without Retry-After and still sees the job complete', async () => {
    const job = await startFollowedJob(h, 'Document retries');
    const before = getJobRequests(h, job.jobId).length;
    // More than the client retries inside one check, so the follower sees the 429 itself.
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 429 }, 10);
    await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(before + 10);
    h.mintlify.setJob(job.jobId, { status: 'failed' });

    await waitForReply(h, job, 'failed');
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('keeps following through a burst of 5xx answers', async () => {
    const job = await startFollowedJob(h, 'Document the SDK');
    const before = getJobRequests(h, job.jobId).length;
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 503 }, 8);
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 500 }, 4);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await waitForReply(h, job, PR);
    expect(getJobRequests(h, job.jobId).length).toBeGreaterThan(before + 12);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('logs a schema-breaking answer once, reads the job again later, and never crashes', async () => {
    const job = await startFollowedJob(h, 'Document the config file');
    const before = getJobRequests(h, job.jobId).length;
    h.mintlify.injectFault(requestsForJob(job.jobId), { schemaBreaking: true }, 4);
    await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(before + 4);
    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });

    await waitForReply(h, job, PR);
    const schemaLines = h.logs.filter((line) =>
      line.includes(`job ${job.jobId}: Mintlify answered in a shape`),
    );
    expect(schemaLines).toHaveLength(1);
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
  });

  it('shows a status Mintlify added after its spec as it is, still followed: the rest of the answer counts, logged once', async () => {
    const job = await startFollowedJob(h, 'Document the review step');
    const answer = { ...h.mintlify.jobs.get(job.jobId), status: 'in_review', prLink: PR };
    const before = getJobRequests(h, job.jobId).length;
    h.mintlify.injectFault(requestsForJob(job.jobId), { status: 200, body: answer }, 3);

    const edit = await waitForCardEdit(h, job, PR);
    expect(JSON.stringify(edit.args.blocks)).toContain('Mintlify says “in_review”');
    expect((await record(h, job.jobId))?.status).toBe('active');
    await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(before + 3);
    expect(
      h.logs.filter((line) => line.includes(`job ${job.jobId}: Mintlify answered the status "in_review"`)),
    ).toHaveLength(1);
    expect(h.logs.filter((line) => line.includes(`job ${job.jobId}: Mintlify answered in a shape`))).toEqual(
      [],
    );

    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForCardEdit(h, job, 'Pull request ready');
    await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
  });

  /** The job's reads numbered from now, those in `failing` answered with `status`; counts the reads. */
  function failReads(jobId: string, failing: number[], status: number): () => number {
    let reads = 0;
    const thisJob = requestsForJob(jobId);
    const chosen = new Set(failing);
    h.mintlify.injectFault((request) => thisJob(request) && chosen.has(++reads), { status }, chosen.size);
    return () => reads;
  }

  it('tells the thread nothing for refused reads that never come three in a row: each may be a passing fault', async () => {
    const job = await startFollowedJob(h, 'Document the flaky key');
    // Reads 1, 2, 4 and 5 from now are refused; 3 answers: never three refusals in a row.
    const reads = failReads(job.jobId, [1, 2, 4, 5], 401);
    await expect.poll(reads).toBeGreaterThanOrEqual(5);

    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await settle(h, sentinel);
    expect(threadReplies(h, job).map(textOf).join('\n')).not.toContain('refuses');
    expect((await record(h, job.jobId))?.announced).toEqual(['0:completed']);
  });

  it('does not give a job up for two 404s with an answer between them', async () => {
    const job = await startFollowedJob(h, 'Document the flaky lookup');
    // Reads 1 and 3 from now answer 404; 2 answers the job.
    const reads = failReads(job.jobId, [1, 3], 404);
    await expect.poll(reads).toBeGreaterThanOrEqual(3);

    h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await waitForReply(h, job, PR);
    await settle(h, sentinel);
    expect(threadReplies(h, job).map(textOf).join('\n')).not.toContain('no longer knows this job');
    expect(await record(h, job.jobId)).toMatchObject({ status: 'completed', announced: ['0:completed'] });
    expect((await record(h, job.jobId))?.goneAt).toBeUndefined();
  });

  it('never drops the note that a job is gone when Slack fails to post it at first: the next check posts it', async () => {
    const job = await startFollowedJob(h, 'Document the vanished job');
    // More failures than the harness's WebClient tries: the bot itself sees Slack fail the post.
    h.slack.failNext('chat.postMessage', { status: 500, channel: job.channel }, 6);
    h.mintlify.jobs.delete(job.jobId);

    await waitForReply(h, job, 'no longer knows this job');
    await expect.poll(async () => (await record(h, job.jobId))?.goneAt).toEqual(expect.any(String));
    await settle(h, sentinel);
    expect(threadReplies(h, job)).toHaveLength(1);
    expect((await record(h, job.jobId))?.announced).toEqual(['0:gone']);
  });
});

describe('a job that runs unusually long', () => {
  it('is reported once in its thread, then still followed to its end', async () => {
    const h = await startBot({ env: { ...FAST_POLL, JOB_SLOW_AFTER_MS: '1000' } });
    try {
      const job = await startFollowedJob(h, 'Migrate every page to the new theme');
      await waitForReply(h, job, 'unusually long');
      const polls = getJobRequests(h, job.jobId).length;
      // Checked on, rarely (POLL_SLOW_INTERVAL_MS), and never dropped.
      await expect.poll(() => getJobRequests(h, job.jobId).length).toBeGreaterThanOrEqual(polls + 2);
      expect(threadReplies(h, job)).toHaveLength(1);

      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, PR);
      expect(threadReplies(h, job)).toHaveLength(2);
      await expect
        .poll(async () => (await record(h, job.jobId))?.announced)
        .toEqual(['0:slow', '0:completed']);
    } finally {
      await h.close();
    }
  });

  it('is promised no end in its thread while Mintlify gives a status this version does not know', async () => {
    const h = await startBot({ env: { ...FAST_POLL, JOB_SLOW_AFTER_MS: '1000' } });
    try {
      const job = await startFollowedJob(h, 'Migrate every page to the new theme');
      const startedAt = Date.now();
      // A status Mintlify may add after this version: "I'll post here when it ends" may never come true.
      const unknown = { ...h.mintlify.jobs.get(job.jobId), status: 'paused' };
      const checkedAt: number[] = [];
      const thisJob = requestsForJob(job.jobId);
      const answeredUnknown = (request: Parameters<typeof thisJob>[0]) => {
        if (!thisJob(request)) return false;
        checkedAt.push(Date.now());
        return true;
      };
      h.mintlify.injectFault(answeredUnknown, { status: 200, body: unknown }, 1_000);
      await waitForCardEdit(h, job, 'Mintlify says “paused”');
      // Checked on several times past JOB_SLOW_AFTER_MS, when a known status would have had its note.
      await expect
        .poll(() => checkedAt.filter((at) => at >= startedAt + 1_500).length, { timeout: 15_000 })
        .toBeGreaterThanOrEqual(3);
      expect(threadReplies(h, job).filter((call) => textOf(call).includes('unusually long'))).toEqual([]);
      expect((await record(h, job.jobId))?.announced).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('a job whose first check the queue could not take (Redis away for a moment)', () => {
  it('is queued again a moment later, and followed to its end', async () => {
    // node-redis's error for a command sent while Redis is away, told by its class.
    class ClientOfflineError extends Error {}
    let refusals = 0;
    const add = Queue.prototype.add;
    const adds = vi.spyOn(Queue.prototype, 'add').mockImplementation(function (this: Queue, ...args) {
      if (args[0] === 'check' && refusals++ === 0)
        return Promise.reject(new ClientOfflineError('The client is offline'));
      return add.apply(this, args);
    });
    const h = await startBot({ env: { ...FAST_POLL }, recordAgainEveryMs: 100 });
    try {
      const job = await startFollowedJob(h, 'Document the offline moment');
      await expect
        .poll(() => h.logs.some((line) => line.includes(`job ${job.jobId} is queued for following`)))
        .toBe(true);
      expect(refusals).toBeGreaterThan(1);
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: 'https://github.com/acme/docs/pull/3' });
      await waitForReply(h, job, 'pull/3');
    } finally {
      adds.mockRestore();
      await h.close();
    }
  });
});

describe('a key Mintlify refuses', () => {
  it('is logged once for a run of refused checks, and once more when checks work again', async () => {
    const h = await startBot({ env: FAST_POLL });
    try {
      const job = await startFollowedJob(h, 'Document the key');
      h.mintlify.injectFault(requestsForJob(job.jobId), { status: 401 }, 6);
      await waitForReply(h, job, 'Mintlify refuses the bot’s requests');
      h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
      await waitForReply(h, job, PR);

      expect(h.logs.filter((line) => line.includes('checking jobs fails'))).toHaveLength(1);
      // Said by the check that read the job again, once its reply is posted.
      await expect
        .poll(() => h.logs.filter((line) => line.includes('checking jobs works again')))
        .toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
