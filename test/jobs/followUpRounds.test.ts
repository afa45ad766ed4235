import { describe, expect, it } from 'vitest';
import { applyAgentJob, applyFollowUpAnswer, type JobRecord } from '../../src/jobs/jobRecord.js';

const PR = 'https://github.com/acme/docs/pull/7';
const finished: JobRecord = {
  jobId: 'job-1',
  projectId: 'proj',
  channel: 'C1',
  threadTs: '1.000100',
  cardTs: '1.000100',
  requestedBy: 'U1',
  prompt: 'Document the flag',
  door: 'command',
  status: 'completed',
  prLink: PR,
  repository: null,
  ref: 'mintlify/job-1',
  model: null,
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:05:00.000Z',
  finishedAt: '2025-01-01T00:05:00.000Z',
  round: 0,
  announced: ['0:completed'],
};

describe('two follow-ups sent before the agent took up the first', () => {
  it('are one round, and its end is told to both people who steered it', () => {
    // Mintlify still answers the old end to both (the agent takes messages up in the background).
    const oldEnd = { id: 'job-1', status: 'completed' as const, prLink: PR };
    const first = applyFollowUpAnswer(finished, oldEnd, new Date('2025-01-02T10:00:00Z'), 'U2');
    const second = applyFollowUpAnswer(first, oldEnd, new Date('2025-01-02T10:00:20Z'), 'U3');
    const done = applyAgentJob(second, { status: 'completed', prLink: PR }, new Date('2025-01-02T10:09:00Z'));
    // Both replies steer the same reopened round: U2 must still be told when it ends.
    expect(done.steeredBy).toEqual(['U2', 'U3']);
    expect(done.round).toBe(1);
  });
});
