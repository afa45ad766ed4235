import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type FollowCheck, followJob, followJobId } from '../../src/jobs/followJobs.js';
import { FOLLOW_QUEUE } from '../../src/queue/queueNames.js';
import type { JobsContext } from '../../src/jobs/jobsContext.js';
import { createLogger } from '../../src/log.js';
import { openMemoryQueues } from '../../src/queue/memoryQueues.js';

const config = loadConfig({
  SLACK_BOT_TOKEN: 'xoxb-1111-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_admin_secret_key_value',
  MINTLIFY_PROJECT_ID: 'proj_1',
  POLL_INTERVAL_MS: '100',
});
const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });

describe('following a job that reopens while its last check is ending', () => {
  it('asks again once the ending check has let go of the id, so the job is not left unfollowed', async () => {
    const queues = openMemoryQueues({ logger });
    const queue = queues.queue<FollowCheck>(FOLLOW_QUEUE);
    const ctx = { config, logger, now: () => new Date() } as unknown as JobsContext;
    let release: () => void = () => {};
    const ending = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runs: string[] = [];
    queue.process(
      async (job) => {
        runs.push(job.id);
        if (runs.length === 1) await ending; // the last check of the finished job, still running
        return undefined;
      },
      { concurrency: 1 },
    );
    await followJob(ctx, queue, 'job-7'); // the job starts
    await expect.poll(() => runs.length).toBe(1);

    await followJob(ctx, queue, 'job-7'); // a follow-up reopens it: the id is held, the add refused
    release(); // the check ends the job (it read the record before the reopen)
    await expect.poll(() => runs.length).toBe(2);
    expect(runs).toEqual([followJobId('job-7'), followJobId('job-7')]);
    await queues.close(1_000);
  });
});
