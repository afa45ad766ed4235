import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, type MintlifyClient } from '../../src/mintlify/index.js';
import { cardEdits, FAST_POLL, record, type StartedJob, startFollowedJob } from '../jobs/followSupport.js';
import { type MintlifyFake, startMintlifyFake } from '../fakes/mintlifyFake.js';
import {
  type BotHarness,
  type HarnessOptions,
  PROJECT_ID,
  SECRETS,
  startBot,
} from '../support/botHarness.js';

const PR = 'https://github.com/acme/docs/pull/50';

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const open of closing.splice(0).reverse()) await open.close();
});

const lastCardText = (h: BotHarness, job: StartedJob) =>
  JSON.stringify(cardEdits(h, job).at(-1)?.args.blocks);

/** A bot whose Mintlify deploys every preview it takes a moment later, as the service does. */
async function bot(options: HarnessOptions = {}): Promise<{ h: BotHarness; mintlify: MintlifyFake }> {
  const mintlify: MintlifyFake = await startMintlifyFake({
    apiKey: SECRETS.mintlifyKey,
    projectId: PROJECT_ID,
    previewDeployMs: 200,
  });
  const h = await startBot({
    mintlify,
    mintlifyOptions: { timeouts: { headersMs: 300 } },
    ...options,
    env: { ...FAST_POLL, PREVIEWS: 'on', ...options.env },
  });
  closing.push(mintlify, h);
  return { h, mintlify };
}

/** A followed job that Mintlify finished with a pull request, seen by the bot. */
async function finishedJob(h: BotHarness, mintlify: MintlifyFake, text: string): Promise<StartedJob> {
  const job = await startFollowedJob(h, text);
  mintlify.setJob(job.jobId, { status: 'completed', prLink: PR });
  await expect.poll(async () => (await record(h, job.jobId))?.status).toBe('completed');
  return job;
}

/** When the bot asked Mintlify for each preview, from now on. */
function previewsAskedAt(h: BotHarness): number[] {
  const client = h.bot.context.jobs.mintlify as unknown as MintlifyClient;
  const deploy = client.deployPreview.bind(client);
  const askedAt: number[] = [];
  vi.spyOn(client, 'deployPreview').mockImplementation((projectId, branch) => {
    askedAt.push(Date.now());
    return deploy(projectId, branch);
  });
  return askedAt;
}

describe('a preview request Mintlify does not answer', () => {
  it('is not shown on the card as a failed preview: Mintlify took it, and deploys it', async () => {
    const { h, mintlify } = await bot();
    // Mintlify queues the deployment, but its answer comes after the bot stopped waiting for it.
    mintlify.injectFault('deployPreview', { delayMs: 1_000 });

    const job = await finishedJob(h, mintlify, 'Document the slow preview');
    await expect.poll(() => mintlify.deployments.size).toBeGreaterThan(0);
    const deployment = [...mintlify.deployments.values()][0]!;
    await expect.poll(() => mintlify.deployments.get(deployment.statusId)?.status).toBe('success');

    await h.bot.drained();
    await expect.poll(() => h.bot.following()).toBe(0);
    await expect.poll(async () => (await record(h, job.jobId))?.preview?.state).toBeDefined();
    // The preview exists: reviewers are not told it failed.
    expect(lastCardText(h, job)).not.toContain('failed');
    // Asked once more, and that answer is followed to the preview's link.
    expect(mintlify.requestsFor('deployPreview')).toHaveLength(2);
    expect(lastCardText(h, job)).toContain(deployment.previewUrl);
  });

  it('is asked for once more, a while later; when neither is answered, the card says it may be deploying', async () => {
    const { h, mintlify } = await bot({ previews: { unansweredWaitMs: 600 } });
    const askedAt = previewsAskedAt(h);
    // Every answer comes long after the bot stopped waiting (300 ms), however busy the machine.
    mintlify.injectFault('deployPreview', { delayMs: 3_000 }, 10);

    const job = await finishedJob(h, mintlify, 'Document the silent preview');
    await expect.poll(async () => (await record(h, job.jobId))?.preview?.state).toBe('unanswered');
    await expect.poll(() => lastCardText(h, job)).toContain('may be deploying it all the same');
    expect(lastCardText(h, job)).toContain('Mintlify dashboard');
    expect(lastCardText(h, job)).not.toContain('failed');

    await h.bot.drained();
    await expect.poll(() => h.bot.following()).toBe(0);
    // Asked twice: the second after the first went unanswered (300 ms), and the wait after it.
    expect(askedAt).toHaveLength(2);
    expect(askedAt[1]! - askedAt[0]!).toBeGreaterThanOrEqual(900);
  });

  it('never sent, twice (Mintlify could not be reached), is shown as failed: no preview was asked for', async () => {
    const { h, mintlify } = await bot();
    const client = h.bot.context.jobs.mintlify as unknown as MintlifyClient;
    const refused = vi
      .spyOn(client, 'deployPreview')
      .mockRejectedValue(new ConnectionError('deployPreview', false, 'ECONNREFUSED'));

    const job = await finishedJob(h, mintlify, 'Document the unreachable preview');
    await expect.poll(() => lastCardText(h, job)).toContain('it could not be reached');
    await h.bot.drained();
    await expect.poll(() => h.bot.following()).toBe(0);
    expect(refused).toHaveBeenCalledTimes(2);
    expect((await record(h, job.jobId))?.preview?.state).toBe('failure');
  });
});
