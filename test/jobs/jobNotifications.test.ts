import { afterEach, describe, expect, it } from 'vitest';
import { announceOnce, noticeKey } from '../../src/jobs/jobNotifications.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { heldStep, watchLeases } from '../support/leases.js';
import { record, startFollowedJob, textOf, threadReplies } from './followSupport.js';

const NOTICE = { key: noticeKey(0, 'slow'), round: 0, text: 'The docs agent is still at it' };

let h: BotHarness;
afterEach(async () => h?.close());

describe('a notice whose lease is lost while it is being posted', () => {
  it('is not posted by the check that lost it, and the next check posts it once', async () => {
    h = await startBot();
    const job = await startFollowedJob(h, 'Document the flag');
    const { jobs } = h.bot.context;
    // Slack answers the post with an error: it may have landed, so the next check reads the thread first.
    h.slack.failNext('chat.postMessage', { error: 'internal_error' });
    expect(await announceOnce(jobs, job.jobId, NOTICE)).toBe('retry');

    const leases = watchLeases(h.bot.store, h.logs);
    // Slack is slow to answer that read; meanwhile the lease lapses and another check takes it.
    const read = heldStep();
    h.slack.failNext('conversations.replies', { until: read.until });
    const announcing = announceOnce(jobs, job.jobId, NOTICE);
    await h.slack.waitForCall('conversations.replies', (call) => call.args.ts === job.cardTs);
    const other = await leases.loseToAnother(`notice:${job.jobId}:${NOTICE.key}`);
    read.release();
    expect(await announcing).toBe('busy');
    expect(threadReplies(h, job)).toEqual([]);
    expect((await record(h, job.jobId))?.announced).toEqual([]);

    // The other check is done without posting it: the next one does, once.
    await other.release();
    expect(await announceOnce(jobs, job.jobId, NOTICE)).toBe('posted');
    expect(threadReplies(h, job).map(textOf)).toEqual([NOTICE.text]);
    expect((await record(h, job.jobId))?.announced).toEqual([NOTICE.key]);
  });
});
