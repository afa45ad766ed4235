import { periodOfRun, previousPeriod } from '../src/digest/period.js';
import { type MintlifyFake, startMintlifyFake } from '../test/fakes/mintlifyFake.js';
import { seedStruggles } from './strugglesDataset.js';
import { visitorsWeek } from './visitorsDataset.js';

/**
 * Mintlify, simulated on loopback: the test fake (which answers only what the real API answers)
 * plus a driver that plays the docs agent. A job works for `jobSeconds`, then completes with a pull
 * request, or fails when its instruction mentions "fail" (the instruction alone: not the Slack
 * message or thread the bot adds as context). A follow-up reopens the job (the fake does that) and
 * starts another round of the same length; the pull request stays the same. A preview deployment
 * of the pull request's branch succeeds after `previewSeconds` (3 by default).
 */

export const SANDBOX_MINTLIFY = {
  apiKey: 'mint_sandbox_not_a_real_key',
  projectId: 'sandbox-docs',
  repository: 'https://github.com/acme/docs',
} as const;

export interface SimulatedMintlify {
  url: string;
  fake: MintlifyFake;
  /** Rounds of work still running: a job started or steered that has not ended yet. */
  readonly working: number;
  close(): Promise<void>;
}

export async function startSimulatedMintlify(options: {
  jobSeconds: number;
  previewSeconds?: number;
  now?: () => Date;
}): Promise<SimulatedMintlify> {
  const fake = await startMintlifyFake({
    apiKey: SANDBOX_MINTLIFY.apiKey,
    projectId: SANDBOX_MINTLIFY.projectId,
    repository: SANDBOX_MINTLIFY.repository,
    previewDeployMs: (options.previewSeconds ?? 3) * 1000,
  });

  // The digest asks for the last 7 full days (UTC, the bot's default) and, to compare, the 7 before.
  const period = periodOfRun((options.now ?? (() => new Date()))(), 'UTC');
  const thisWeek = visitorsWeek(0);
  const lastWeek = visitorsWeek(1);
  fake.setVisitors(thisWeek.rows, thisWeek.totals);
  fake.setVisitorsOf(previousPeriod(period).dateFrom, lastWeek.rows, lastWeek.totals);
  seedStruggles(fake, period.dateFrom);

  const rounds = new Map<string, NodeJS.Timeout>();
  let pullRequests = 0;
  const pullRequestOf = new Map<string, string>();

  const endRound = (jobId: string, instruction: string) => {
    rounds.delete(jobId);
    const job = fake.jobs.get(jobId);
    if (!job || job.status !== 'active') return;
    if (/fail/i.test(instructionOf(instruction))) {
      fake.setJob(jobId, { status: 'failed' });
      return;
    }
    // A reopened job reads prLink null while it works (the spec); its round ends on the same pull request.
    let prLink = pullRequestOf.get(jobId);
    if (!prLink) {
      pullRequests += 1;
      prLink = `${SANDBOX_MINTLIFY.repository}/pull/${100 + pullRequests}`;
      pullRequestOf.set(jobId, prLink);
    }
    fake.setJob(jobId, { status: 'completed', prLink });
  };

  const startRound = (jobId: string, instruction: string) => {
    clearTimeout(rounds.get(jobId));
    rounds.set(
      jobId,
      setTimeout(() => endRound(jobId, instruction), options.jobSeconds * 1000),
    );
  };

  const stopListening = fake.onAnswer((request, answer) => {
    const job = answer.body as { id?: unknown };
    const prompt = (request.body as { prompt?: unknown } | undefined)?.prompt;
    if (answer.status >= 300 || typeof job.id !== 'string' || typeof prompt !== 'string') return;
    if (request.operation === 'createJob' || request.operation === 'sendMessage') startRound(job.id, prompt);
  });

  return {
    url: fake.url,
    fake,
    get working() {
      return rounds.size;
    },
    async close() {
      stopListening();
      for (const timer of rounds.values()) clearTimeout(timer);
      rounds.clear();
      await fake.close();
    },
  };
}

/** The person's own words: the bot adds context (a message, a thread) after them as `--- … ---` sections. */
function instructionOf(prompt: string): string {
  const context = prompt.indexOf('\n\n--- ');
  return context === -1 ? prompt : prompt.slice(0, context);
}
