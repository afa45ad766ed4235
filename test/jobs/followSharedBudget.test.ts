import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { type StartedJob, startFollowedJob } from './followSupport.js';

/**
 * Two bots on one Redis namespace, each with its own connections and BullMQ workers, as two
 * processes would have: they share the jobs to follow, one check per job at a time, under one
 * POLL_REQUESTS_PER_MINUTE for both.
 */

const PER_MINUTE = 600; // 10 reads a second for the whole deployment
const INTERVAL_MS = 200;
// Far more than the budget: 10 jobs every 200 ms is 50 reads a second (100 with two unshared followers).
const JOBS = 10;
const ENV = {
  POLL_INTERVAL_MS: String(INTERVAL_MS),
  POLL_MAX_INTERVAL_MS: String(INTERVAL_MS),
  POLL_SLOW_INTERVAL_MS: String(INTERVAL_MS),
  POLL_CONCURRENCY: '4',
  POLL_REQUESTS_PER_MINUTE: String(PER_MINUTE),
};

interface Read {
  bot: 'first' | 'second';
  jobId: string;
  at: number;
}

/** Notes every job read the bot makes, by whom and when. */
function recordReads(h: BotHarness, bot: Read['bot'], reads: Read[]): void {
  const mintlify = h.bot.context.jobs.mintlify;
  const getJob = mintlify.getJob.bind(mintlify);
  mintlify.getJob = (projectId, jobId) => {
    reads.push({ bot, jobId, at: Date.now() });
    return getJob(projectId, jobId);
  };
}

describe('two bot processes following the same jobs', () => {
  let first: BotHarness;
  let second: BotHarness;
  const reads: Read[] = [];
  const jobs: StartedJob[] = [];

  beforeAll(async () => {
    first = await startBot({ env: ENV });
    recordReads(first, 'first', reads);
    for (let i = 0; i < JOBS; i++) jobs.push(await startFollowedJob(first, `Document flag number ${i}`));
    second = await startBot({
      env: ENV,
      slack: first.slack,
      mintlify: first.mintlify,
      namespace: first.config.store.namespace,
    });
    recordReads(second, 'second', reads);
    const from = reads.length;
    // Long enough for every job to be read several times at the budget's pace.
    await vi.waitFor(
      () => {
        if (reads.length - from < 80) throw new Error(`only ${reads.length - from} reads so far`);
      },
      { timeout: 20_000, interval: 50 },
    );
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('share the reads: both read jobs, and the second added no check of its own', async () => {
    expect(reads.some((read) => read.bot === 'first')).toBe(true);
    expect(reads.some((read) => read.bot === 'second')).toBe(true);
    expect(await second.bot.following()).toBe(JOBS);
  });

  it('read each job once per revisit, never twice at once', () => {
    for (const { jobId } of jobs) {
      const times = reads.filter((read) => read.jobId === jobId).map((read) => read.at);
      expect(times.length).toBeGreaterThanOrEqual(3);
      const gaps = times.slice(1).map((at, i) => at - (times[i] as number));
      // The cadence is 200 ms ±20%: two followers reading the same job would leave gaps far shorter.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS * 0.8 - 20);
    }
  });

  it('keep together within the one budget of POLL_REQUESTS_PER_MINUTE', () => {
    const perSecond = PER_MINUTE / 60;
    const times = reads.map((read) => read.at).sort((a, b) => a - b);
    const windowMs = 3_000;
    for (const [i, start] of times.entries()) {
      const inWindow = times.slice(i).filter((at) => at < start + windowMs).length;
      // The limiter counts fixed windows of a second: a sliding window may straddle one extra.
      expect(inWindow).toBeLessThanOrEqual(perSecond * (windowMs / 1000 + 1));
    }
  });
});
