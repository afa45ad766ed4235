import { createClient } from '@keyv/redis';
import { createNodeRedisClient, Queue } from 'bullmq';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SlackCall } from '../fakes/slackFake.js';
import {
  cardEdits,
  FAST_POLL,
  record,
  type StartedJob,
  startFollowedJob,
  textOf,
  threadReplies,
} from '../jobs/followSupport.js';
import { type BotHarness, type HarnessOptions, SECRETS, startBot } from '../support/botHarness.js';
import { sendInteraction } from '../support/slackRequests.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';
import type { AgentJob } from '../../src/mintlify/index.js';
import { PREVIEW_STATUS_QUEUE } from '../../src/queue/queueNames.js';

const PR = 'https://github.com/acme/docs/pull/50';

const harnesses: BotHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0).reverse()) await h.close();
});
const bot = async (options: HarnessOptions = {}) => {
  const h = await startBot({ ...options, env: { ...FAST_POLL, PREVIEWS: 'on', ...options.env } });
  harnesses.push(h);
  return h;
};

/** The buttons of the card's last edit. */
function cardButtons(h: BotHarness, job: StartedJob): Array<{ text: string; url: string }> {
  const blocks = (cardEdits(h, job).at(-1)?.args.blocks ?? []) as Array<{
    type: string;
    elements?: unknown[];
  }>;
  return blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => (block.elements ?? []) as Array<{ text: { text: string }; url: string }>)
    .map((button) => ({ text: button.text.text, url: button.url }));
}

const lastCardText = (h: BotHarness, job: StartedJob) =>
  JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks);

const cardEditsWith = (h: BotHarness, job: StartedJob, text: string): SlackCall[] =>
  cardEdits(h, job).filter((call) => JSON.stringify(call.args.blocks).includes(text));

/** When Mintlify answered each request for a preview deployment, from now on. */
function previewsAskedAt(h: BotHarness): number[] {
  const askedAt: number[] = [];
  h.mintlify.onAnswer((request) => {
    if (request.operation === 'deployPreview') askedAt.push(Date.now());
  });
  return askedAt;
}

/** Mintlify finishes the job with a pull request (and what `patch` adds), and the bot has seen it. */
async function finish(h: BotHarness, job: StartedJob, patch: Partial<AgentJob> = {}): Promise<void> {
  h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR, ...patch });
  await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
}

/** A followed job of `instruction` that Mintlify finished with a pull request. */
async function finishedJob(h: BotHarness, instruction: string, channel?: string): Promise<StartedJob> {
  const job = await startFollowedJob(h, instruction, channel);
  await finish(h, job);
  return job;
}

/**
 * Nothing left to run: no Slack request queued, and no job, preview or deployment followed (a
 * second note or request would come from those queues).
 */
async function settled(h: BotHarness): Promise<void> {
  await h.bot.drained();
  await expect.poll(() => h.bot.following()).toBe(0);
}

/** A bot on Redis that finished a job and asked for its preview, then stopped before showing it. */
async function askedThenStopped(label: string, instruction: string) {
  const namespace = uniqueNamespace(label);
  const first = await bot({ namespace });
  const job = await finishedJob(first, instruction);
  const deployment = await deploymentOf(first);
  await expect
    .poll(async () => (await record(first, job.jobId))?.preview?.statusId)
    .toBe(deployment.statusId);
  await first.stopBot();
  return { namespace, first, job, deployment };
}

const deploymentOf = async (h: BotHarness, count = 1) => {
  await expect.poll(() => h.mintlify.deployments.size).toBe(count);
  return [...h.mintlify.deployments.values()].at(-1)!;
};

describe('preview deployments of a job’s pull request', () => {
  it('asks once for the job’s branch, and shows the URL only once the deployment succeeded', async () => {
    // Home tab refreshes 0.2 s apart at least (the bot's: 3 s), so the last is not held back.
    const h = await bot({ homeRefreshMinIntervalMs: 200 });
    const job = await finishedJob(h, 'Document the preview flow');
    const deployment = await deploymentOf(h);
    expect(h.mintlify.requestsFor('deployPreview').map((request) => request.body)).toEqual([
      { branch: `mintlify/${job.jobId}` },
    ]);
    // Deploying: the card says so, without the URL.
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');
    expect(lastCardText(h, job)).not.toContain(deployment.previewUrl);
    expect(cardButtons(h, job).map((button) => button.text)).toEqual(['Open pull request']);
    expect(JSON.stringify(h.slack.callsTo('chat.postMessage'))).not.toContain(deployment.previewUrl);

    h.mintlify.setDeployment(deployment.statusId, { status: 'success', summary: 'Deployed' });
    await expect
      .poll(() => cardButtons(h, job))
      .toEqual([
        { text: 'Open pull request', url: PR },
        { text: 'Preview', url: deployment.previewUrl },
      ]);
    // The thread says so once, in a reply that mentions nobody.
    const note = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === job.cardTs && textOf(call).includes(deployment.previewUrl),
    );
    expect(textOf(note)).not.toMatch(/<@U/);
    await settled(h);
    expect(threadReplies(h, job).filter((call) => textOf(call).includes(deployment.previewUrl))).toHaveLength(
      1,
    );
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(1);
    // The App Home lists it next to the pull request.
    await expect
      .poll(() => JSON.stringify(h.slack.callsTo('views.publish').at(-1)?.args.view), { timeout: 20_000 })
      .toContain(deployment.previewUrl);
  });

  it('acknowledges a click on the card’s pull request and preview buttons, so Slack shows no error on them', async () => {
    const h = await bot();
    const job = await finishedJob(h, 'Document the button clicks');
    const deployment = await deploymentOf(h);
    h.mintlify.setDeployment(deployment.statusId, { status: 'success', summary: 'Deployed' });
    await expect.poll(() => cardButtons(h, job)).toHaveLength(2);

    // A link button opens its URL in the browser, and Slack sends the click all the same.
    const card = cardEdits(h, job).at(-1)!;
    const actions = (card.args.blocks as Array<{ type: string; block_id?: string; elements?: unknown[] }>)
      .filter((block) => block.type === 'actions')
      .flatMap((block) =>
        (block.elements as Array<{ action_id: string; url: string; text: unknown }>).map((button) => ({
          block_id: block.block_id ?? 'actions',
          ...button,
        })),
      );
    for (const action of actions) {
      const clicked = await sendInteraction(h.url, SECRETS.signingSecret, {
        type: 'block_actions',
        team: { id: 'T0TEAM', domain: 'acme' },
        user: { id: 'U0USER', name: 'user', team_id: 'T0TEAM' },
        api_app_id: 'A0APP',
        token: 'deprecated',
        trigger_id: '7777.8888.mnop',
        container: { type: 'message', message_ts: job.cardTs, channel_id: job.channel },
        channel: { id: job.channel, name: 'docs' },
        message: { type: 'message', ts: job.cardTs, text: card.args.text, user: 'U0BOT' },
        response_url: h.slack.responseUrl(`button-${action.action_id}`),
        actions: [{ type: 'button', ...action, action_ts: '1700000000.3' }],
      });
      expect(clicked.status, action.action_id).toBe(200);
    }
    expect(actions.map((action) => action.url)).toEqual([PR, deployment.previewUrl]);
  });

  it('asks for the preview even when the job’s end could not be read back at first', async () => {
    const h = await bot();
    const job = await startFollowedJob(h, 'Document the read-back');
    const { records } = h.bot.context.jobs;
    const read = records.get.bind(records);
    let refused = 0;
    vi.spyOn(records, 'get').mockImplementation(async (jobId) => {
      // The follower's last step for a finished job reads its record again (outside checkJob):
      // Redis does not answer the first such read.
      const caller = new Error().stack ?? '';
      const afterCheck = caller.includes('followJobs') && !caller.includes('checkJob');
      if (afterCheck && refused++ === 0) throw new Error('Redis did not answer');
      return read(jobId);
    });
    await finish(h, job);
    await deploymentOf(h);
    expect(refused).toBeGreaterThan(1);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(1);
  });

  it('shows a deployed preview even when Slack failed the card’s edit at first, and tells the thread once', async () => {
    const h = await bot();
    const job = await finishedJob(h, 'Document the retry of the preview');
    const deployment = await deploymentOf(h);
    // Slack fails the edit, past the client's own retries.
    h.slack.failNext('chat.update', { error: 'internal_error' }, 3);
    h.mintlify.setDeployment(deployment.statusId, { status: 'success' });
    await expect
      .poll(() => cardButtons(h, job), { timeout: 10_000 })
      .toEqual([
        { text: 'Open pull request', url: PR },
        { text: 'Preview', url: deployment.previewUrl },
      ]);
    await expect
      .poll(() => threadReplies(h, job).filter((call) => textOf(call).includes(deployment.previewUrl)).length)
      .toBe(1);
    await settled(h);
    expect(threadReplies(h, job).filter((call) => textOf(call).includes(deployment.previewUrl))).toHaveLength(
      1,
    );
  });

  it('says the preview failed, with the deployment’s summary; the pull request is not affected', async () => {
    const h = await bot();
    const job = await finishedJob(h, 'Document the failure case');
    const deployment = await deploymentOf(h);
    h.mintlify.setDeployment(deployment.statusId, {
      status: 'failure',
      summary: 'Broken link in <quickstart.mdx>',
    });
    await expect.poll(() => cardEditsWith(h, job, 'The preview of').length).toBeGreaterThan(0);
    const text = lastCardText(h, job);
    expect(text).toContain('Broken link in &lt;quickstart.mdx&gt;');
    expect(text).toContain('The pull request is not affected');
    expect(cardButtons(h, job)).toEqual([{ text: 'Open pull request', url: PR }]);
    expect(text).not.toContain(deployment.previewUrl);
  });

  it('previews the branch Mintlify names only once under way (created with `source.ref` null, as the spec allows)', async () => {
    const h = await bot();
    h.mintlify.setBranchesNamedAtOnce(false);
    const job = await startFollowedJob(h, 'Document the late branch');
    expect(h.mintlify.jobs.get(job.jobId)?.source?.ref).toBeNull();
    await finish(h, job, { source: { ref: 'docs/late-branch' } });
    await deploymentOf(h);
    expect(h.mintlify.requestsFor('deployPreview').map((request) => request.body)).toEqual([
      { branch: 'docs/late-branch' },
    ]);
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview of `docs/late-branch`');
  });

  it('asks for no preview of a pull request whose branch Mintlify never named; the pull request is shown', async () => {
    const h = await bot();
    h.mintlify.setBranchesNamedAtOnce(false);
    const job = await finishedJob(h, 'Document the nameless branch');
    await expect.poll(() => cardButtons(h, job)).toEqual([{ text: 'Open pull request', url: PR }]);
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toEqual([]);
    expect(lastCardText(h, job)).not.toContain('preview');
  });

  it('follows a deployment whose status answers give no `status` (the spec requires none) as still deploying', async () => {
    const h = await bot();
    h.mintlify.setDeploymentStatesGiven(false);
    const job = await finishedJob(h, 'Document the stateless deployment');
    const deployment = await deploymentOf(h);
    const reads = () => h.mintlify.requestsFor('deploymentStatus').length;
    await expect.poll(reads).toBeGreaterThan(1);
    expect(lastCardText(h, job)).toContain('Deploying a preview');
    expect(lastCardText(h, job)).not.toContain('failed');

    h.mintlify.setDeployment(deployment.statusId, { status: 'success', summary: 'Deployed' });
    h.mintlify.setDeploymentStatesGiven(true);
    await expect
      .poll(() => cardButtons(h, job))
      .toEqual([
        { text: 'Open pull request', url: PR },
        { text: 'Preview', url: deployment.previewUrl },
      ]);
    await settled(h);
  });

  it('says a preview deployed without a link is deployed, with no button and no reply', async () => {
    const h = await bot();
    h.mintlify.setPreviewUrlsGiven(false);
    const job = await finishedJob(h, 'Document the linkless preview');
    const deployment = await deploymentOf(h);
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');
    h.mintlify.setDeployment(deployment.statusId, { status: 'success', summary: 'Deployed' });
    await expect.poll(() => lastCardText(h, job)).toContain('is deployed; Mintlify gave no link to it');
    expect(cardButtons(h, job)).toEqual([{ text: 'Open pull request', url: PR }]);
    await expect.poll(async () => (await record(h, job.jobId))?.preview?.shown).toBe(true);
    await settled(h);
    expect(threadReplies(h, job).filter((call) => textOf(call).includes('preview'))).toEqual([]);
  });

  it('gives up on a deployment still unfinished after 30 minutes: the card says the preview failed, and it is followed no more', async () => {
    let skewMs = 0;
    const h = await bot({ now: () => new Date(Date.now() + skewMs) });
    const job = await finishedJob(h, 'Document the stuck deployment');
    const deployment = await deploymentOf(h);
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');
    const reads = () => h.mintlify.requestsFor('deploymentStatus').length;
    await expect.poll(reads).toBeGreaterThan(0);

    // The deployment never ends; the bot's clock passes the 30 minutes.
    skewMs = 31 * 60_000;
    await expect.poll(() => lastCardText(h, job)).toContain('it did not finish within 30 minutes');
    expect(lastCardText(h, job)).toContain('The pull request is not affected');
    expect(cardButtons(h, job)).toEqual([{ text: 'Open pull request', url: PR }]);
    expect(JSON.stringify(h.slack.callsTo('chat.postMessage'))).not.toContain(deployment.previewUrl);
    // No deployment left to read: nothing is followed any more.
    await settled(h);
  });

  it('deploys again, once, when a follow-up makes the job finish again, and tells the thread in words of its own', async () => {
    const h = await bot();
    const job = await finishedJob(h, 'Document the redeploy');
    const first = await deploymentOf(h, 1);
    h.mintlify.setDeployment(first.statusId, { status: 'success' });
    await expect.poll(() => cardButtons(h, job).length).toBe(2);

    await h.event({
      type: 'message',
      channel: job.channel,
      channel_type: 'channel',
      user: 'U0USER',
      text: 'Also mention the flag',
      ts: '1860000000.000100',
      thread_ts: job.cardTs,
    });
    await expect.poll(async () => (await record(h, job.jobId))?.round).toBe(1);
    // Reopened: the old preview is not shown as the new round's.
    await expect.poll(() => cardButtons(h, job).map((button) => button.text)).toEqual(['Open pull request']);
    await finish(h, job);
    const second = await deploymentOf(h, 2);
    expect(second.branch).toBe(`mintlify/${job.jobId}`);
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');
    h.mintlify.setDeployment(second.statusId, { status: 'success' });
    await expect
      .poll(() => cardButtons(h, job).map((button) => button.text))
      .toEqual(['Open pull request', 'Preview']);
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(2);
    // Each round's preview is told once, the later one as the later round's end is: not the first again.
    const told = () =>
      threadReplies(h, job)
        .map(textOf)
        .filter((text) => text.includes('open the preview'));
    await expect
      .poll(told)
      .toEqual([
        expect.stringContaining('The preview of this change is deployed'),
        expect.stringContaining('The preview with the latest replies is deployed'),
      ]);
  });

  it('learns a plan without previews (403) once: no more requests for the hour, one log line, nothing on the cards', async () => {
    const h = await bot();
    h.mintlify.setPreviewsAvailable(false);
    const jobs = [
      await startFollowedJob(h, 'Document A', 'C0ONE'),
      await startFollowedJob(h, 'Document B', 'C0TWO'),
    ];
    await finish(h, jobs[0]!);
    await expect.poll(() => h.mintlify.requestsFor('deployPreview').length).toBe(1);
    // Learnt (the refusal is stored before it is logged): the second job is not asked for.
    await expect
      .poll(() => h.logs.filter((line) => line.includes('refused a preview deployment')).length)
      .toBe(1);
    await finish(h, jobs[1]!);
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(1);
    expect(h.logs.filter((line) => line.includes('refused a preview deployment'))).toHaveLength(1);
    for (const job of jobs) {
      expect(lastCardText(h, job)).not.toContain('preview');
      expect(cardButtons(h, job).map((button) => button.text)).toEqual(['Open pull request']);
    }
  });

  it('waits out a 429 and asks again; a 5xx is shown as a failure and never asked again', async () => {
    const h = await bot();
    h.mintlify.injectFault('deployPreview', { status: 429, retryAfter: '1' });
    const limited = await startFollowedJob(h, 'Document the rate limit', 'C0ONE');
    await finish(h, limited);
    const deployed = await deploymentOf(h, 1);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(2);
    h.mintlify.setDeployment(deployed.statusId, { status: 'success' });

    h.mintlify.injectFault('deployPreview', { status: 503 });
    const broken = await startFollowedJob(h, 'Document the outage', 'C0TWO');
    await finish(h, broken);
    await expect.poll(() => lastCardText(h, broken)).toContain('did not take the request');
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(3);
  });

  it('a preview Mintlify refuses with the 400 its spec declares: the card says so, the pull request stands, nothing is asked again', async () => {
    const h = await bot();
    // The deployments spec's 400 and its inline `{error}` body, as Mintlify words it.
    h.mintlify.injectFault('deployPreview', {
      status: 400,
      body: { error: 'Invalid request. The `branch` field is required.' },
    });
    const job = await finishedJob(h, 'Document the refused preview');
    await expect.poll(() => lastCardText(h, job)).toContain('it refused the branch');
    expect(lastCardText(h, job)).toContain('The pull request is not affected');
    expect(cardButtons(h, job)).toEqual([{ text: 'Open pull request', url: PR }]);
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(1);
    expect(threadReplies(h, job).filter((call) => textOf(call).includes('preview'))).toEqual([]);
  });

  it('a deployment Mintlify queued (202) without a statusId is not shown as failed, and its URL is not thrown away', async () => {
    const h = await bot();
    // The spec marks neither field of the 202 required: "Preview deployment queued successfully".
    const previewUrl = 'https://acme-queued.mintlify.app';
    h.mintlify.injectFault('deployPreview', { status: 202, body: { previewUrl } });
    const job = await finishedJob(h, 'Document the untracked preview', 'C0UNTRACKED');
    await expect.poll(() => h.mintlify.requestsFor('deployPreview').length).toBe(1);
    await expect.poll(async () => (await record(h, job.jobId))?.preview?.state).toBeDefined();
    await settled(h);
    // Mintlify accepted the deployment: the card must not tell reviewers the preview failed.
    expect(lastCardText(h, job)).not.toContain('failed');
    expect(lastCardText(h, job)).toContain('without a way for me to tell when it is done');
    expect(JSON.stringify(cardEdits(h, job).map((call) => call.args.blocks))).toContain(previewUrl);
  });

  it('a deployment Mintlify took in an answer that cannot be read is not shown as failed, nor asked for again', async () => {
    const h = await bot();
    h.mintlify.injectFault('deployPreview', { malformedJson: true });
    const job = await finishedJob(h, 'Document the unreadable preview', 'C0UNREAD');
    await expect.poll(async () => (await record(h, job.jobId))?.preview?.state).toBe('untracked');
    await settled(h);
    expect(lastCardText(h, job)).not.toContain('failed');
    expect(lastCardText(h, job)).toContain('or where (see your Mintlify dashboard)');
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(1);
  });

  it('a preview Mintlify refuses for the bot’s key (401): the card names the cause, not "an unexpected answer"', async () => {
    const h = await bot();
    h.mintlify.injectFault('deployPreview', { status: 401 });
    const job = await finishedJob(h, 'Document the refused preview', 'C0REFUSED');
    await expect.poll(() => lastCardText(h, job)).toContain('did not take the request');
    expect(lastCardText(h, job)).not.toContain('an unexpected answer');
    expect(lastCardText(h, job)).toContain('API key');
  });

  it('reads a deployment again only a minute after a 429 that gave no Retry-After, while others are read on', async () => {
    const h = await bot();
    // Every try of the client's first read (4 here) is refused, without saying for how long.
    h.mintlify.injectFault('deploymentStatus', { status: 429 }, 4);
    const limited = await startFollowedJob(h, 'Document the limited read', 'C0ONE');
    await finish(h, limited);
    const first = await deploymentOf(h, 1);
    const readsOf = (statusId: string) =>
      h.mintlify.requestsFor('deploymentStatus').filter((request) => request.path.endsWith(`/${statusId}`))
        .length;
    await expect.poll(() => readsOf(first.statusId)).toBe(4);

    const other = await startFollowedJob(h, 'Document the other read', 'C0TWO');
    await finish(h, other);
    const second = await deploymentOf(h, 2);
    // Read every 50 ms meanwhile: the limited one waits its minute.
    await expect.poll(() => readsOf(second.statusId)).toBeGreaterThanOrEqual(10);
    expect(readsOf(first.statusId)).toBe(4);
  });

  it('lets requests wait their turn under the limiter; none is dropped', async () => {
    const h = await bot({ previews: { limiter: { max: 1, durationMs: 1_000 } } });
    const askedAt = previewsAskedAt(h);
    const jobs = [
      await startFollowedJob(h, 'Document one', 'C0ONE'),
      await startFollowedJob(h, 'Document two', 'C0TWO'),
      await startFollowedJob(h, 'Document three', 'C0THREE'),
    ];
    for (const job of jobs) h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await expect.poll(() => h.mintlify.requestsFor('deployPreview').length).toBe(3);
    const asked = h.mintlify
      .requestsFor('deployPreview')
      .map((request) => (request.body as { branch: string }).branch);
    expect(asked.sort()).toEqual(jobs.map((job) => `mintlify/${job.jobId}`).sort());
    // One a window: the three jobs finished together, their requests came a window apart (as the
    // fake saw them: a busy machine delays one request more than the next, hence the margin).
    const gaps = askedAt.slice(1).map((at, index) => at - (askedAt[index] ?? at));
    expect(gaps).toHaveLength(2);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(500);
  });

  it('asks for one preview every 12 s by default: no minute holds more than Mintlify’s 5, even across a window’s edge', async () => {
    const h = await bot({ previews: { limiter: undefined } });
    const askedAt = previewsAskedAt(h);
    const jobs = [
      await startFollowedJob(h, 'Document one', 'C0ONE'),
      await startFollowedJob(h, 'Document two', 'C0TWO'),
    ];
    for (const job of jobs) h.mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
    await expect.poll(() => askedAt.length, { timeout: 20_000 }).toBe(2);
    expect((askedAt[1] ?? 0) - (askedAt[0] ?? 0)).toBeGreaterThanOrEqual(11_000);
  });

  it('after a crash between asking and showing, follows the same deployment and edits the card once', async () => {
    const { namespace, first, job, deployment } = await askedThenStopped(
      'preview-crash',
      'Document the crash',
    );

    first.mintlify.setDeployment(deployment.statusId, { status: 'success' });
    const second = await bot({ namespace, slack: first.slack, mintlify: first.mintlify });
    await expect
      .poll(() => cardEditsWith(second, job, deployment.previewUrl).length, { timeout: 10_000 })
      .toBe(1);
    await settled(second);
    const previewNotes = () =>
      threadReplies(second, job).filter((call) => textOf(call).includes(deployment.previewUrl));
    // The thread's note follows the card's edit: once there, it is the only one.
    await expect.poll(() => previewNotes().length).toBe(1);
    await expect.poll(async () => (await record(second, job.jobId))?.announced).toContain('0:preview');
    expect(first.mintlify.requestsFor('deployPreview')).toHaveLength(1);
    expect(cardEditsWith(second, job, deployment.previewUrl)).toHaveLength(1);
    expect(previewNotes()).toHaveLength(1);
  });

  it('follows a deployment whose queue job was lost again, at the worker’s next check of the queues', async () => {
    const { namespace, first, job, deployment } = await askedThenStopped(
      'preview-lost',
      'Document the lost check',
    );
    // Its check of the deployment is gone from the queue (it failed for good while Redis was away).
    const redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
    const statusQueue = new Queue(PREVIEW_STATUS_QUEUE, {
      connection: createNodeRedisClient(redis),
      prefix: namespace,
    });
    try {
      expect(await statusQueue.remove(`preview-status-${deployment.statusId}`)).toBe(1);
    } finally {
      await statusQueue.close();
      await redis.quit();
    }

    first.mintlify.setDeployment(deployment.statusId, { status: 'success' });
    const second = await bot({ namespace, slack: first.slack, mintlify: first.mintlify });
    await expect
      .poll(() => cardEditsWith(second, job, deployment.previewUrl).length, { timeout: 10_000 })
      .toBe(1);
    expect(second.logs).toContainEqual(
      expect.stringContaining('following 1 preview deployment(s) the queues did not hold'),
    );
    await settled(second);
    expect(first.mintlify.requestsFor('deployPreview')).toHaveLength(1);
  });

  it('refreshes the requester’s Home tab with the preview once it is deployed', async () => {
    // Home tab refreshes 0.2 s apart at least (the bot's: 3 s).
    const h = await bot({ homeRefreshMinIntervalMs: 200 });
    const shownHome = (call: SlackCall) => JSON.stringify(call.args.view);
    const job = await startFollowedJob(h, 'Document the Home preview');
    // The Home tab lists the new job, then the pull request: no other refresh is due after those.
    await h.slack.waitForCall('views.publish', (call) => call.response.ok === true);
    await finish(h, job);
    await h.slack.waitForCall('views.publish', (call) => shownHome(call).includes(PR), 20_000);
    const deployment = await deploymentOf(h);

    h.mintlify.setDeployment(deployment.statusId, { status: 'success', summary: 'Deployed' });
    const refreshed = await h.slack.waitForCall(
      'views.publish',
      (call) => shownHome(call).includes(deployment.previewUrl),
      20_000,
    );
    expect(refreshed.args.user_id).toBe('U0USER');
  });

  it('asks for nothing with PREVIEWS=off', async () => {
    const h = await bot({ env: { PREVIEWS: 'off' } });
    const job = await finishedJob(h, 'Document without previews');
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toHaveLength(0);
    expect(lastCardText(h, job)).not.toContain('Deploying a preview');
    expect(cardButtons(h, job).map((button) => button.text)).toEqual(['Open pull request']);
  });

  it('asks for no preview of a job that failed or was archived with a pull request, nor of one that changed nothing', async () => {
    const h = await bot();
    const ends = [
      { status: 'failed', prLink: PR },
      { status: 'archived', prLink: PR },
      { status: 'completed', prLink: null },
    ] as const;
    const jobs = await Promise.all(
      ends.map((_, n) => startFollowedJob(h, `Document the end number ${n + 1}`)),
    );
    ends.forEach((end, n) => h.mintlify.setJob(jobs[n]!.jobId, end));
    for (const [n, job] of jobs.entries()) {
      await expect.poll(async () => (await record(h, job.jobId))?.status).toBe(ends[n]!.status);
    }
    await settled(h);
    expect(h.mintlify.requestsFor('deployPreview')).toEqual([]);
    for (const job of jobs) {
      expect(lastCardText(h, job)).not.toContain('preview');
      expect((await record(h, job.jobId))?.preview).toBeUndefined();
    }
  });

  it('tells the thread of a deployed preview even when Slack failed the reply at first', async () => {
    const h = await bot();
    const job = await finishedJob(h, 'Document the retry of the preview note');
    const deployment = await deploymentOf(h);
    await expect.poll(() => lastCardText(h, job)).toContain('Deploying a preview');
    // Slack fails the reply, past the client's own retries.
    h.slack.failNext('chat.postMessage', { status: 500, channel: job.channel }, 6);
    h.mintlify.setDeployment(deployment.statusId, { status: 'success' });
    await expect
      .poll(
        () => threadReplies(h, job).filter((call) => textOf(call).includes(deployment.previewUrl)).length,
        {
          timeout: 10_000,
        },
      )
      .toBe(1);
    await settled(h);
    expect(threadReplies(h, job).filter((call) => textOf(call).includes(deployment.previewUrl))).toHaveLength(
      1,
    );
  });
});
