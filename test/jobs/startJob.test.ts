import { afterEach, describe, expect, it, vi } from 'vitest';
import { interruptedStartText } from '../../src/jobs/jobAnswers.js';
import { startLeaseName } from '../../src/jobs/jobStarts.js';
import { startJob } from '../../src/jobs/startJob.js';
import type { Lease } from '../../src/store/lease.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { watchLeases } from '../support/leases.js';

const START_ID = 'command_start-1';
const INPUT = {
  prompt: 'Document the flag',
  requestedBy: 'U0ADA',
  channel: 'C0DOCS',
  door: 'command',
} as const;

let h: BotHarness;
afterEach(async () => h?.close());

describe('a start whose lease is lost before Mintlify is asked', () => {
  it('does not create the job, and its run again tells the person it was interrupted', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    const leases = watchLeases(h.bot.store, h.logs);
    // Nothing outside Redis is asked before the create: the budget read is the slow step. Meanwhile
    // the lease lapses and the same start, run again elsewhere, takes it.
    const readBudget = jobs.ledger.current.bind(jobs.ledger);
    let other: Lease | undefined;
    vi.spyOn(jobs.ledger, 'current').mockImplementationOnce(async (projectId) => {
      other = await leases.loseToAnother(startLeaseName(START_ID));
      return readBudget(projectId);
    });

    await expect(startJob(jobs, INPUT, START_ID)).rejects.toThrow(
      `the start ${START_ID} is under way elsewhere`,
    );
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);

    // The queue runs the request again once the other run is done: it answers from the start.
    await other?.release();
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({
      kind: 'failed',
      text: interruptedStartText(INPUT.prompt),
    });
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
  });
});
