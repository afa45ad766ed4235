import { afterEach, describe, expect, it, vi } from 'vitest';
import { cardEdits, FAST_POLL, record, type StartedJob, startFollowedJob } from '../jobs/followSupport.js';
import { type BotHarness, type HarnessOptions, startBot } from '../support/botHarness.js';

const PR = 'https://github.com/acme/docs/pull/50';

const harnesses: BotHarness[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const h of harnesses.splice(0).reverse()) await h.close();
});
const bot = async (options: HarnessOptions = {}) => {
  const h = await startBot({ ...options, env: { ...FAST_POLL, PREVIEWS: 'on', ...options.env } });
  harnesses.push(h);
  return h;
};

const lastCardText = (h: BotHarness, job: StartedJob) =>
  JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks);

/**
 * A job's preview is deployed; its end is written, and before its card is redrawn a reviewer replies
 * in the thread: the reply's answer, and the follower's first check of the reopened job, both show
 * it working. Returns once they have, with `release` letting the preview's edit go on to Slack.
 */
async function previewEndsAsReplyReopens(h: BotHarness) {
  const job = await startFollowedJob(h, 'Document the preview race');
  h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
  await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
  await expect.poll(() => h.mintlify.deployments.size).toBe(1);
  const deployment = [...h.mintlify.deployments.values()][0]!;
  await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');

  const { records } = h.bot.context.jobs;
  const update = records.update.bind(records);
  let ended!: () => void;
  const previewEnded = new Promise<void>((resolve) => (ended = resolve));
  let release!: () => void;
  const replied = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  vi.spyOn(records, 'update').mockImplementation(async (jobId, change) => {
    const next = await update(jobId, change);
    if (!held && next?.preview?.state === 'success' && next.round === 0) {
      held = true;
      ended();
      await replied;
    }
    return next;
  });
  h.mintlify.setDeployment(deployment.statusId, { status: 'success' });
  await previewEnded;

  await h.event({
    type: 'message',
    channel: job.channel,
    channel_type: 'channel',
    user: 'U0USER',
    text: 'Also mention the --json flag',
    ts: '1860000000.000100',
    thread_ts: job.cardTs,
  });
  await expect.poll(async () => (await record(h, job.jobId))?.round).toBe(1);
  const working = () =>
    cardEdits(h, job).filter((call) => JSON.stringify(call.args.blocks).includes('Working on it')).length;
  await expect.poll(working).toBeGreaterThanOrEqual(2);
  return { job, deployment, release };
}

/** The preview's end is over for the bot, and Mintlify is read a few times more as the job works on. */
async function settledOnReply(h: BotHarness, job: StartedJob) {
  await expect.poll(() => h.bot.following()).toBe(1);
  await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('active');
  const reads = h.mintlify.requestsFor('getJob').length;
  await expect.poll(() => h.mintlify.requestsFor('getJob').length).toBeGreaterThan(reads + 3);
}

describe('a preview that ends as a reply reopens its job', () => {
  it('leaves the card showing the job at work on the reply, not its earlier pull request as ready with a preview', async () => {
    const h = await bot();
    const { job, deployment, release } = await previewEndsAsReplyReopens(h);
    // The preview's edit, slow to reach Slack, comes after both.
    release();

    await settledOnReply(h, job);
    // The agent works on the reply: the card says so, as the thread's ✅ does.
    const card = lastCardText(h, job);
    expect(card).toContain('Working on it');
    expect(card).not.toContain(deployment.previewUrl);
    expect(card).not.toContain('Pull request ready');
  });

  it('draws the card again a little later when Slack did not take it drawn again at first', async () => {
    const h = await bot();
    const { job, deployment, release } = await previewEndsAsReplyReopens(h);
    // Slack takes the preview's edit, and fails the next one.
    const stop = h.slack.onCall((call) => {
      if (call.method === 'chat.update' && JSON.stringify(call.args.blocks).includes('Pull request ready')) {
        stop();
        h.slack.failNext('chat.update', { error: 'internal_error' });
      }
    });
    release();
    await expect
      .poll(() => h.slack.callsTo('chat.update').filter((call) => call.response.ok === false).length)
      .toBe(1);

    await expect.poll(() => lastCardText(h, job)).toContain('Working on it');
    await settledOnReply(h, job);
    const card = lastCardText(h, job);
    expect(card).toContain('Working on it');
    expect(card).not.toContain(deployment.previewUrl);
  });
});
