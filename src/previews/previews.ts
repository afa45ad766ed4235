import {
  ConnectionError,
  ForbiddenError,
  isMintlifyError,
  type MintlifyClient,
  RateLimitedError,
  SchemaError,
  TimeoutError,
} from '../mintlify/index.js';
import type { Processor, WorkQueue } from '../queue/queue.js';
import { jobCard } from '../jobs/jobCard.js';
import { editJobCard, noticeKey, announceOnce, type SlackDelivery } from '../jobs/jobNotifications.js';
import { currentPreview, type JobPreview, type JobRecord } from '../jobs/jobRecord.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import { isLinkable, linkTarget } from '../slack/links.js';

/**
 * Preview deployments: once a job's pull request is ready, Mintlify deploys its branch, and the
 * card links the rendered pages. Two queues: `previews` asks for the deployment (one POST per job
 * and round, a second one only a while after a first Mintlify did not answer, under a limiter of
 * Mintlify's 5 a minute for the whole deployment), and
 * `preview-status` follows the deployment until it succeeds or fails.
 */

/**
 * Mintlify's limit: 5 preview deployments a minute per organization. BullMQ's limiter counts fixed
 * windows, so 5 a minute could be 10 within a few seconds across two windows' edge: one every
 * 12 s keeps any minute to 5.
 */
export const PREVIEW_LIMITER = { max: 1, durationMs: 12_000 };
/** How often a deployment is read while it is queued or in progress. */
const STATUS_EVERY_MS = 5_000;
/** A deployment still unfinished after this is reported as failed (the pull request stands). */
const GIVE_UP_MS = 30 * 60_000;
/** A plan without previews (403) is not asked again for this long. */
const REFUSED_FOR_MS = 60 * 60_000;
/**
 * A processor that threw (Redis away, say) is tried again, for about 10 minutes: asking again
 * after a crash is safe (Mintlify redeploys the branch), and reading a deployment always is.
 */
const RETRIES = { attempts: 8, backoffMs: 5_000 };
/** A preview request that Mintlify rate-limited without saying for how long waits this. */
const RATE_LIMITED_WAIT_MS = 60_000;
/**
 * A preview request Mintlify did not answer (no answer in time, a broken connection) is asked again
 * once, this much later and in line with the others: the first may have reached Mintlify, and asking
 * again only redeploys the branch.
 */
const UNANSWERED_WAIT_MS = 60_000;
/** Edits of a card for one change of its preview, at most: the job written again during each is drawn again. */
const CARD_DRAWS = 3;

export interface PreviewRequest {
  jobId: string;
  round: number;
  /**
   * Mintlify did not answer this round's request once: the next is the last. `reached`: that request
   * may have reached it (it was sent), so its deployment may be under way.
   */
  unanswered?: { reached: boolean };
}

export interface PreviewCheck {
  jobId: string;
  round: number;
  statusId: string;
  /** When the deployment was asked for (ms since the epoch). */
  since: number;
  /**
   * The card shows the job as it was before someone changed it (a reply reopened it) while the
   * preview's edit was made, and Slack did not take it drawn again: drawn from the record first.
   */
  redrawCard?: true;
}

export interface PreviewsContext extends JobsContext {
  mintlify: JobsContext['mintlify'] & Pick<MintlifyClient, 'deployPreview' | 'deploymentStatus'>;
  statusQueue: WorkQueue<PreviewCheck>;
  /** Tests shorten how often a deployment is read. */
  statusEveryMs?: number;
  /** Tests shorten how long a request Mintlify did not answer waits to be asked again. */
  unansweredWaitMs?: number;
}

/**
 * Jobs whose preview is asked for and not yet shown: the worker's periodic check of the queues finds
 * one whose queue job was lost (failed for good with Redis away, or stalled too often) and queues it
 * again. Kept two days from the last preview asked.
 */
const PENDING = 'previews:pending';
const PENDING_KEPT_MS = 2 * 24 * 3_600_000;

/** The queue job that asks for one round's preview: one per job and round in the whole deployment. */
const previewJobId = (jobId: string, round: number) => `preview-${jobId}-${round}`;
const refusedKey = (projectId: string) => `previews-refused:${projectId}`;

/** A completed job with a pull request on a known branch: the branch it would preview. */
function branchToPreview(record: JobRecord): string | undefined {
  return record.status === 'completed' && record.prLink && record.ref ? record.ref : undefined;
}

/** A finished job whose pull request has no preview for its latest round yet. */
function previewDue(record: JobRecord): boolean {
  return branchToPreview(record) !== undefined && record.preview?.round !== record.round;
}

/** Queues the preview of a finished job's pull request when one is due (a no-op otherwise). */
export async function requestPreview(
  ctx: Pick<JobsContext, 'store' | 'now'>,
  queue: WorkQueue<PreviewRequest>,
  record: JobRecord,
): Promise<void> {
  if (!previewDue(record)) return;
  await ctx.store.atomic.indexAdd(PENDING, record.jobId, ctx.now().getTime(), undefined, PENDING_KEPT_MS);
  await askFor(queue, record);
}

function askFor(queue: WorkQueue<PreviewRequest>, record: JobRecord): Promise<boolean> {
  return queue.add(
    'deploy',
    { jobId: record.jobId, round: record.round },
    { jobId: previewJobId(record.jobId, record.round), ...RETRIES },
  );
}

/**
 * Queues again the previews whose queue job was lost: a request never answered, a deployment still
 * followed or not yet shown (their queue jobs' ids keep one of each). Those over (shown, cleared, or
 * refused before a deployment was made) are forgotten. Returns how many were queued again.
 */
export async function resumePreviews(
  ctx: PreviewsContext,
  queue: WorkQueue<PreviewRequest>,
): Promise<number> {
  let resumed = 0;
  for (const jobId of await ctx.store.atomic.indexAll(PENDING)) {
    const record = await ctx.records.get(jobId);
    const step = record && resumption(record);
    if (!record || !step) await ctx.store.atomic.indexRemove(PENDING, jobId);
    else if (step === 'ask' ? await askFor(queue, record) : await followDeployment(ctx, record, ...step)) {
      resumed += 1;
    }
  }
  return resumed;
}

/**
 * What a pending preview still needs: asking for (never asked; or noted as asked with no answer
 * kept, and Mintlify redeploys a branch harmlessly), following (a deployment not yet shown), or
 * nothing (shown, cleared, or refused before a deployment was made).
 */
function resumption(record: JobRecord): 'ask' | [statusId: string, since: number] | undefined {
  if (previewDue(record)) return 'ask';
  const preview = currentPreview(record);
  if (!preview || preview.shown) return undefined;
  if (preview.statusId) return [preview.statusId, Date.parse(preview.askedAt)];
  return preview.state === 'asked' ? 'ask' : undefined;
}

/** The `previews` queue's processor: asks Mintlify to deploy the branch, once. */
export function previewProcessor(ctx: PreviewsContext): Processor<PreviewRequest> {
  return async (job) => {
    const { jobId, round } = job.data;
    const record = await ctx.records.get(jobId);
    const branch = record && record.round === round ? branchToPreview(record) : undefined;
    // Reopened meanwhile, or gone: its next round asks for its own.
    if (!record || branch === undefined) return undefined;
    const asked = record.preview?.round === round ? record.preview : undefined;
    if (asked?.statusId) {
      // Asked before a crash: follow that deployment rather than asking again.
      await followDeployment(ctx, record, asked.statusId, Date.parse(asked.askedAt));
      return undefined;
    }
    if ((await ctx.store.kv.get(refusedKey(record.projectId))) !== undefined) {
      await ctx.store.atomic.indexRemove(PENDING, jobId);
      return undefined;
    }

    // Noted before the POST; a crash right after it asks once more (Mintlify redeploys: harmless).
    const askedAt = ctx.now().toISOString();
    await setPreview(ctx, jobId, round, { round, branch, state: 'asked', askedAt });
    let deployment: Awaited<ReturnType<PreviewsContext['mintlify']['deployPreview']>>;
    try {
      deployment = await ctx.mintlify.deployPreview(record.projectId, branch);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        // Refused, so not deployed: asked again once the limit allows, with every other request.
        return { rateLimited: { waitMs: error.retryAfterMs ?? RATE_LIMITED_WAIT_MS } };
      }
      if (error instanceof ForbiddenError) {
        await learnRefused(ctx, record.projectId, error);
        await clearPreview(ctx, jobId, round);
        // Not asked again when the hour is over either: the plan decides, not the job.
        await ctx.store.atomic.indexRemove(PENDING, jobId);
        return undefined;
      }
      if (!isMintlifyError(error)) throw error;
      if (error instanceof SchemaError) {
        // A 2xx: Mintlify took it, in an answer we cannot read.
        ctx.logger.warn(`job ${jobId}: the preview of ${branch} was asked for, but ${error.message}`);
        await endUnfollowed(ctx, jobId, round, { state: 'untracked' });
        return undefined;
      }
      if (error instanceof TimeoutError || error instanceof ConnectionError) {
        const reached = error.mayHaveReachedService || job.data.unanswered?.reached === true;
        if (!job.data.unanswered) {
          // Asked again later, once: should the first have reached Mintlify, it redeploys the branch.
          ctx.logger.info(
            `job ${jobId}: Mintlify did not answer the request for the preview of ${branch} (${error.message}); asking again in a while`,
          );
          const delayMs = ctx.unansweredWaitMs ?? UNANSWERED_WAIT_MS;
          return { again: { delayMs, data: { jobId, round, unanswered: { reached } } } };
        }
        if (reached) {
          // Neither answered, and one at least was sent: Mintlify may be deploying it, or not.
          ctx.logger.warn(
            `job ${jobId}: Mintlify answered neither request for the preview of ${branch} (${error.message}); the card says it may be deploying`,
          );
          await endUnfollowed(ctx, jobId, round, { state: 'unanswered' });
          return undefined;
        }
      }
      // 400, 5xx: the POST may have reached Mintlify, so it is not sent again. Or it was never sent, twice.
      ctx.logger.warn(`job ${jobId}: the preview of ${branch} could not be asked for: ${error.message}`);
      await endUnfollowed(ctx, jobId, round, {
        state: 'failure',
        summary: `Mintlify did not take the request (${plainReason(error)})`,
      });
      return undefined;
    }
    if (!deployment.statusId) {
      // Queued all the same (the spec requires neither field): its link, if any, is worth giving.
      const url = deployment.previewUrl;
      await endUnfollowed(ctx, jobId, round, { state: 'untracked', ...(isLinkable(url) ? { url } : {}) });
      return undefined;
    }
    const updated = await setPreview(ctx, jobId, round, {
      round,
      branch,
      state: 'queued',
      askedAt,
      statusId: deployment.statusId,
      ...(isLinkable(deployment.previewUrl) ? { url: deployment.previewUrl } : {}),
    });
    if (updated) await showCard(ctx, updated);
    await followDeployment(ctx, record, deployment.statusId, Date.parse(askedAt));
    return undefined;
  };
}

function followDeployment(
  ctx: PreviewsContext,
  record: JobRecord,
  statusId: string,
  since: number,
): Promise<boolean> {
  return ctx.statusQueue.add(
    'status',
    { jobId: record.jobId, round: record.round, statusId, since },
    { jobId: `preview-status-${statusId}`, delayMs: ctx.statusEveryMs ?? STATUS_EVERY_MS, ...RETRIES },
  );
}

/** The `preview-status` queue's processor: reads the deployment until it succeeds or fails. */
export function previewStatusProcessor(ctx: PreviewsContext): Processor<PreviewCheck> {
  return async (job) => {
    const { jobId, round, statusId, since } = job.data;
    const delayMs = ctx.statusEveryMs ?? STATUS_EVERY_MS;
    const again = { again: { delayMs, data: { jobId, round, statusId, since } } };
    const redrawLater = { again: { delayMs, data: { ...again.again.data, redrawCard: true as const } } };
    const told = (outcome: Told) =>
      outcome === 'told' ? undefined : outcome === 'redraw' ? redrawLater : again;
    const ended = async (record: JobRecord | undefined) =>
      record ? told(await tellPreview(ctx, record, statusId)) : undefined;
    if (job.data.redrawCard) {
      const current = await ctx.records.get(jobId);
      const card = current && (await showCard(ctx, current));
      if (card === 'retry' || card === 'redraw') return redrawLater;
    }
    const record = await ctx.records.get(jobId);
    const preview = record && currentPreview(record);
    // Superseded (a later round asked for its own), or over and shown.
    if (!preview || preview.statusId !== statusId || preview.shown) return undefined;
    const late = ctx.now().getTime() - since > GIVE_UP_MS;
    // Over, but Slack did not take the card's edit or the thread's reply: told again.
    if (preview.state === 'success' || preview.state === 'failure') {
      return told(await tellPreview(ctx, record, statusId));
    }
    let status: Awaited<ReturnType<PreviewsContext['mintlify']['deploymentStatus']>>;
    try {
      status = await ctx.mintlify.deploymentStatus(statusId);
    } catch (error) {
      if (!isMintlifyError(error)) throw error;
      if (late) {
        return ended(
          await endPreview(ctx, jobId, round, {
            state: 'failure',
            summary: 'Mintlify did not say how it went',
          }),
        );
      }
      if (error instanceof RateLimitedError)
        return { again: { ...again.again, delayMs: error.retryAfterMs ?? RATE_LIMITED_WAIT_MS } };
      return again;
    }
    if (status.status === 'success') return ended(await endPreview(ctx, jobId, round, { state: 'success' }));
    if (status.status === 'failure') {
      return ended(
        await endPreview(ctx, jobId, round, {
          state: 'failure',
          summary: status.summary?.trim() || 'Mintlify did not say why',
        }),
      );
    }
    if (late) {
      return ended(
        await endPreview(ctx, jobId, round, {
          state: 'failure',
          summary: 'it did not finish within 30 minutes',
        }),
      );
    }
    if (status.status === 'in_progress' && preview.state !== 'in_progress') {
      await setPreview(ctx, jobId, round, { ...preview, state: 'in_progress' });
    }
    return again;
  };
}

/**
 * How a preview's end was told: all of it; not all, to be told again; or all, but its card still
 * shows the job as it was before a reply reopened it, to be drawn again.
 */
type Told = 'told' | 'again' | 'redraw';

/**
 * Shows the round's ended preview: the card redrawn and, once deployed, one short reply in the
 * thread, without a mention (the card already changed for the person). 'again' while Slack should
 * be asked again; then marked shown. Nothing, for a deployment the job has moved on from.
 */
async function tellPreview(ctx: PreviewsContext, record: JobRecord, statusId: string): Promise<Told> {
  const preview = currentPreview(record);
  if (!preview || preview.statusId !== statusId || preview.shown) return 'told';
  const card = await showCard(ctx, record);
  if (card === 'retry') return 'again';
  ctx.onJobChanged?.(record);
  if (preview.state === 'success' && preview.url) {
    const told = await announceOnce(ctx, record.jobId, {
      key: noticeKey(record.round, 'preview'),
      round: record.round,
      text: previewNewsText(record.round, preview.url),
    });
    if (told === 'retry' || told === 'busy') return card === 'redraw' ? 'redraw' : 'again';
  }
  await ctx.records.update(record.jobId, (current) =>
    current.round === record.round && current.preview?.statusId === statusId
      ? { ...current, preview: { ...current.preview, shown: true } }
      : current,
  );
  return card === 'redraw' ? 'redraw' : 'told';
}

/**
 * The thread's word that the round's preview is deployed. A later round's (after a reply) says so,
 * as that round's end does: the same words again would read as a repeat of the first.
 */
function previewNewsText(round: number, url: string): string {
  const what = round > 0 ? 'with the latest replies' : 'of this change';
  return `:eyes: The preview ${what} is deployed: <${linkTarget(url)}|open the preview>`;
}

/**
 * Edits the card from `record`, the job as the preview's write left it. Someone may have changed
 * the job while the edit was made (a reply reopened it, and its own edit of the card came first):
 * then the card is drawn again from the record as it is now, as a job's check does when a reply
 * overtakes it, so the preview's older view (its pull request ready) does not stay on the card.
 * 'redraw' when Slack took the preview's edit but not the one after it.
 */
async function showCard(ctx: PreviewsContext, record: JobRecord): Promise<SlackDelivery | 'redraw'> {
  let drawn = record;
  for (let draws = 1; ; draws += 1) {
    const delivery = await editJobCard(ctx, drawn);
    if (delivery !== 'done') return drawn !== record && delivery === 'retry' ? 'redraw' : delivery;
    const current = await ctx.records.get(record.jobId);
    if (!current || sameCard(current, drawn)) return 'done';
    // Changed at every edit: drawn again later rather than now.
    if (draws === CARD_DRAWS) return 'redraw';
    drawn = current;
  }
}

const sameCard = (a: JobRecord, b: JobRecord) => JSON.stringify(jobCard(a)) === JSON.stringify(jobCard(b));

/** Writes the round's preview (unless the job moved on to another round) and returns the record. */
function setPreview(
  ctx: PreviewsContext,
  jobId: string,
  round: number,
  preview: JobPreview,
): Promise<JobRecord | undefined> {
  return ctx.records.update(jobId, (current) =>
    current.round === round ? { ...current, preview } : current,
  );
}

async function clearPreview(ctx: PreviewsContext, jobId: string, round: number): Promise<void> {
  await ctx.records.update(jobId, (current) => {
    if (current.round !== round || current.preview === undefined) return current;
    const { preview: _dropped, ...rest } = current;
    return rest;
  });
}

/**
 * A preview with no deployment to follow: not asked for (its failure), or taken by Mintlify without
 * a status to read (its link, if given). Its card says so, once.
 */
async function endUnfollowed(
  ctx: PreviewsContext,
  jobId: string,
  round: number,
  end: Pick<JobPreview, 'state' | 'summary' | 'url'>,
): Promise<void> {
  const updated = await endPreview(ctx, jobId, round, end);
  if (updated && currentPreview(updated)) {
    await showCard(ctx, updated);
    ctx.onJobChanged?.(updated);
  }
}

/** Ends the round's preview (success, failure, or not followed) in its record; returns the record. */
function endPreview(
  ctx: PreviewsContext,
  jobId: string,
  round: number,
  end: Pick<JobPreview, 'state' | 'summary' | 'url'>,
): Promise<JobRecord | undefined> {
  return ctx.records.update(jobId, (current) => {
    if (current.round !== round || current.preview?.round !== round) return current;
    return { ...current, preview: { ...current.preview, ...end } };
  });
}

/** A plan without previews: not asked again for an hour, said once in the log. */
async function learnRefused(ctx: PreviewsContext, projectId: string, error: ForbiddenError): Promise<void> {
  await ctx.store.kv.set(refusedKey(projectId), error.message, REFUSED_FOR_MS);
  if (await ctx.store.atomic.setIfAbsent(`previews-refused-said:${projectId}`, '1', REFUSED_FOR_MS)) {
    ctx.logger.warn(
      `Mintlify refused a preview deployment for project ${projectId} (403: the plan may not include previews, ` +
        'or the API key lacks the write scope); no previews are asked for this hour, and cards show none. ' +
        'Set PREVIEWS=off to stop asking.',
    );
  }
}

function plainReason(error: { kind: string; message: string }): string {
  switch (error.kind) {
    case 'timeout':
      return 'no answer in time';
    case 'connection':
      return 'it could not be reached';
    case 'service':
      return 'it had a problem on its side';
    case 'invalid_request':
      return 'it refused the branch';
    case 'unauthorized':
      return 'it refused the bot’s API key, which is wrong or has expired';
    case 'not_found':
      return 'it does not know the docs project: check MINTLIFY_PROJECT_ID';
    case 'redirected':
      return 'its address sends requests elsewhere: check MINTLIFY_API_URL';
    default:
      return 'an unexpected answer';
  }
}
