import { describe, expect, it } from 'vitest';
import { startBot } from '../support/botHarness.js';
import {
  FAST_POLL,
  getJobRequests,
  record,
  replyInThread,
  settle,
  startFollowedJob,
  waitForReply,
} from './followSupport.js';

const PR = 'https://github.com/acme/docs/pull/42';

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
});
