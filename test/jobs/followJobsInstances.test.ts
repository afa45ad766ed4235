import { afterEach, describe, expect, it } from 'vitest';
import { announceOnce } from '../../src/jobs/jobNotifications.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import {
  FAST_POLL,
  getJobRequests,
  record,
  settle,
  startFollowedJob,
  textOf,
  threadReplies,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/5';
const harnesses: BotHarness[] = [];

/** A second bot on the same fakes and Redis namespace: another instance, or the same one restarted. */
const sameWorld = (h: BotHarness) =>
  startBot({ env: FAST_POLL, slack: h.slack, mintlify: h.mintlify, namespace: h.config.store.namespace });

afterEach(async () => {
  // The last one started owns no fakes; the first closes them.
  for (const h of harnesses.splice(0).reverse()) await h.close();
});

describe('following jobs from several instances', () => {
  it('posts exactly one reply per finished job when two instances share Redis', async () => {
    const first = await startBot({ env: FAST_POLL });
    harnesses.push(first);
    const sentinel = await startFollowedJob(first, 'Sentinel job that never ends');
    const jobs = [];
    for (const n of [1, 2, 3, 4, 5]) jobs.push(await startFollowedJob(first, `Document feature ${n}`));
    const second = await sameWorld(first);
    harnesses.push(second);
    // Both instances share one pending check per job: the second added none of its own at start.
    expect(await second.bot.following()).toBe(jobs.length + 1);
    await settle(first, sentinel);

    for (const job of jobs) first.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    for (const job of jobs) await waitForReply(first, job, PR);
    await settle(first, sentinel);
    await settle(first, sentinel);
    for (const job of jobs) {
      expect(threadReplies(first, job)).toHaveLength(1);
      expect((await record(first, job.jobId))?.announced).toEqual(['0:completed']);
    }
  });

  it('posts a notice once when checks on two instances race to post it', async () => {
    const first = await startBot({ env: FAST_POLL });
    harnesses.push(first);
    const second = await sameWorld(first);
    harnesses.push(second);
    const job = await startFollowedJob(first, 'Document the race');
    const notice = { key: '0:test', round: 0, text: 'One notice, whoever posts it' };

    const outcomes = await Promise.all(
      [first, second, first, second].map((h) => announceOnce(h.bot.context.jobs, job.jobId, notice)),
    );
    expect(outcomes.filter((outcome) => outcome === 'posted')).toHaveLength(1);
    // Later attempts find it on the record.
    expect(await announceOnce(second.bot.context.jobs, job.jobId, notice)).toBe('already_told');
    expect(threadReplies(first, job).filter((call) => textOf(call) === notice.text)).toHaveLength(1);
  });

  it('picks up a job another instance started while it was already running', async () => {
    const first = await startBot({ env: FAST_POLL });
    harnesses.push(first);
    const second = await sameWorld(first);
    harnesses.push(second);
    const job = await startFollowedJob(first, 'Document the new login flow');
    await first.stopBot(); // the instance that started the job goes away

    first.mintlify.setJob(job.jobId, { status: 'failed' });
    // The second's idle worker wakes for the job's next check within BullMQ's drain delay (5 s).
    await second.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === job.cardTs && textOf(call).includes('failed'),
      20_000,
    );
  });

  it('announces a job that finished while the bot was down, once, after the restart', async () => {
    const before = await startBot({ env: FAST_POLL });
    harnesses.push(before);
    const sentinel = await startFollowedJob(before, 'Sentinel job that never ends');
    const job = await startFollowedJob(before, 'Document the status page');
    await before.stopBot();
    before.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    const polls = getJobRequests(before, job.jobId).length;

    const after = await sameWorld(before);
    harnesses.push(after);
    const reply = await waitForReply(after, job, PR);
    expect(textOf(reply)).toContain('<@U0USER>');
    expect(getJobRequests(after, job.jobId).length).toBeGreaterThan(polls);
    await settle(after, sentinel);
    expect(threadReplies(after, job)).toHaveLength(1);
    expect((await record(after, job.jobId))?.status).toBe('completed');
  });
});
