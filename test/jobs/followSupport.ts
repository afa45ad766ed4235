import { expect, vi } from 'vitest';
import type { JobRecord } from '../../src/jobs/jobRecord.js';
import type { SlackCall } from '../fakes/slackFake.js';
import type { BotHarness } from '../support/botHarness.js';

/** Small intervals so a job's end is seen within a few hundred ms; no test sleeps for an interval. */
export const FAST_POLL = {
  POLL_INTERVAL_MS: '100',
  POLL_MAX_INTERVAL_MS: '200',
  POLL_SLOW_INTERVAL_MS: '300',
  POLL_CONCURRENCY: '4',
  POLL_REQUESTS_PER_MINUTE: '6000',
};

export const REQUESTER = 'U0USER';

/** vi.waitFor's own default (1 s) is short for a busy machine. */
const WAIT = { timeout: 10_000, interval: 20 };

export interface StartedJob {
  jobId: string;
  channel: string;
  cardTs: string;
}

/** `/docs-agent <text>`, then waits until the card is posted and its thread is on the record. */
export async function startFollowedJob(
  h: BotHarness,
  text: string,
  channel = 'C0CHANNEL',
): Promise<StartedJob> {
  await h.command(text, { channel_id: channel });
  const card = await h.slack.waitForCall(
    'chat.postMessage',
    (call) =>
      call.args.channel === channel && call.args.thread_ts === undefined && textOf(call).includes(text),
  );
  const cardTs = String(card.response.ts);
  // vi.waitFor rather than expect.poll: this also runs in beforeAll hooks.
  const found = await vi.waitFor(async () => {
    const record: JobRecord | undefined = await h.bot.context.jobs.records.byThread(channel, cardTs);
    if (!record) throw new Error('the card is posted, but its thread is not on the record yet');
    return record;
  }, WAIT);
  return { jobId: found.jobId, channel, cardTs };
}

export const textOf = (call: SlackCall) => String(call.args.text ?? '');

/** A start as a door hands it to `startJob` (tests that call it directly). */
export const START_INPUT = {
  prompt: 'Document the flag',
  requestedBy: 'U0ADA',
  channel: 'C0DOCS',
  door: 'command',
} as const;

/** Cards of START_INPUT's job that Slack accepted. */
export function startedCards(h: BotHarness): SlackCall[] {
  return h.slack
    .callsTo('chat.postMessage')
    .filter((call) => textOf(call).includes(START_INPUT.prompt) && call.response.ok === true);
}

/** Replies the bot posted (successfully) in the job's thread. */
export function threadReplies(h: BotHarness, job: StartedJob): SlackCall[] {
  return h.slack
    .callsTo('chat.postMessage')
    .filter((call) => call.args.thread_ts === job.cardTs && call.response.ok === true);
}

/** Edits of the job's card that Slack accepted. */
export function cardEdits(h: BotHarness, job: StartedJob): SlackCall[] {
  return h.slack.callsTo('chat.update').filter((call) => call.args.ts === job.cardTs && call.response.ok);
}

export async function waitForReply(h: BotHarness, job: StartedJob, includes: string): Promise<SlackCall> {
  return h.slack.waitForCall(
    'chat.postMessage',
    (call) =>
      call.args.thread_ts === job.cardTs && call.response.ok === true && textOf(call).includes(includes),
  );
}

export async function waitForCardEdit(h: BotHarness, job: StartedJob, includes: string): Promise<SlackCall> {
  return h.slack.waitForCall(
    'chat.update',
    (call) =>
      call.args.ts === job.cardTs &&
      call.response.ok === true &&
      JSON.stringify(call.args).includes(includes),
  );
}

export function getJobRequests(h: BotHarness, jobId: string) {
  return h.mintlify.requestsFor('getJob').filter((request) => request.path.endsWith(`/job/${jobId}`));
}

/** Matches Mintlify requests for one job, to aim a fault at it alone. */
export const requestsForJob = (jobId: string) => (request: { path: string }) =>
  request.path.endsWith(`/job/${jobId}`);

/**
 * Lets the follower run a few more rounds: waits until a still-active job (the sentinel) has been
 * checked `rounds` more times. Anything a finished job would still do wrongly (a second reply,
 * another poll) would have happened by then.
 */
export async function settle(h: BotHarness, sentinel: StartedJob, rounds = 3): Promise<void> {
  const seen = getJobRequests(h, sentinel.jobId).length;
  await expect
    .poll(() => getJobRequests(h, sentinel.jobId).length, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(seen + rounds);
}

export const record = (h: BotHarness, jobId: string) => h.bot.context.jobs.records.get(jobId);

/** The requester replies under the job's card; resolves once the bot has taken the reply. */
export async function replyInThread(
  h: BotHarness,
  job: StartedJob,
  text: string,
  user = REQUESTER,
): Promise<void> {
  const reply = h.slack.seedMessage(job.channel, { user, text, thread_ts: job.cardTs });
  await h.event({
    type: 'message',
    channel: job.channel,
    channel_type: 'channel',
    user,
    text: reply.text,
    ts: reply.ts,
    thread_ts: job.cardTs,
  });
  await h.slack.waitForCall('reactions.add', (call) => call.args.timestamp === reply.ts);
}
