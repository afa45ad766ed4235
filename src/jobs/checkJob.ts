import {
  type AgentJob,
  ForbiddenError,
  isMintlifyError,
  isPassingFailure,
  NotFoundError,
  RateLimitedError,
  SchemaError,
  UnauthorizedError,
} from '../mintlify/index.js';
import { type JobNewsKind, jobNewsText } from './jobNews.js';
import { announceOnce, editJobCard, type Notice, noticeKey } from './jobNotifications.js';
import { applyAgentJob, FINISHED, followUpNotTakenUp, type JobRecord } from './jobRecord.js';
import type { JobsContext } from './jobsContext.js';
import { recoverJobCard } from './recoverJobCard.js';

/**
 * How long after a follow-up a job may still read as it ended before: the agent takes a message up
 * in the background, and Mintlify does not say how soon.
 */
export const FOLLOW_UP_GRACE_MS = 2 * 60_000;
/** Refused reads in a row before the thread is told (one could be a passing fault of Mintlify's). */
const REFUSED_READS_BEFORE_NOTICE = 3;
/** A job is given up as gone after this many 404s in a row (a job just created may not be known yet). */
const NOT_FOUND_READS_BEFORE_GONE = 2;

/** What the follower remembers about one job between checks (carried by its queue job). */
export interface JobMemory {
  projectId: string;
  /** When this round of work began; unknown for a job resumed from the store until its first check. */
  activeSince: number | undefined;
  /** A follow-up reopened the job: its card still shows how the previous round ended. */
  redrawCard: boolean;
  cardGone: boolean;
  /** The channel is archived or gone, or the bot was removed: the job is followed without Slack. */
  slackGone: boolean;
  schemaLogged: boolean;
  /** A status Mintlify answered that this version does not know, once logged. */
  unrecognizedStatus?: string;
  /** Active for longer than JOB_SLOW_AFTER_MS: checked rarely from now on. */
  slow: boolean;
  /** Reads in a row Mintlify refused (401, 403): the key must be fixed, and the thread is told. */
  refusedReads?: number;
  /** Reads in a row Mintlify answered 404. */
  notFoundReads?: number;
}

export const newJobMemory = (projectId: string): JobMemory => ({
  projectId,
  activeSince: undefined,
  redrawCard: false,
  cardGone: false,
  slackGone: false,
  schemaLogged: false,
  slow: false,
});

export type CheckResult =
  | { kind: 'following' }
  | { kind: 'done'; why: 'finished' | 'gone' | 'no_record' }
  /** `problem`: a failure an operator must fix (a refused key, say), for the follower to log once. */
  | { kind: 'retry'; problem?: unknown }
  | { kind: 'rate_limited'; retryAfterMs: number | undefined }
  /** The job's start still holds it (its card is being posted): check again later. */
  | { kind: 'busy' };

/**
 * One check of one job: read it from Mintlify, redraw its card when its status or pull request
 * changed, post the news its thread is owed, then save the record. The record is saved last,
 * and only when Slack took everything, so a failed post is simply found again at the next check.
 */
export async function checkJob(
  ctx: JobsContext,
  jobId: string,
  memory: JobMemory,
  now: number,
): Promise<CheckResult> {
  let record = await ctx.records.get(jobId);
  if (!record) {
    // Forgotten after JOB_RETENTION_DAYS without news: no longer listed as unfinished either.
    await ctx.records.forget(jobId);
    return { kind: 'done', why: 'no_record' } as const;
  }
  if (record.pendingCard && record.cardTs === null) {
    // Its start was cut short, or Slack was busy: the card comes first, so the news has a thread.
    const card = await recoverJobCard(ctx, record);
    if (card !== 'done') return { kind: card } as const;
    record = await ctx.records.get(jobId);
    if (!record) return { kind: 'done', why: 'no_record' } as const;
  }
  memory.projectId = record.projectId;
  // Resumed from the store (a restart): the round began when the job started, or was reopened.
  memory.activeSince ??=
    Date.parse(record.roundStartedAt ?? (record.round === 0 ? record.createdAt : '')) || now;
  if (isSettled(record, memory)) return { kind: 'done', why: 'finished' } as const;

  let job: AgentJob;
  try {
    job = await ctx.mintlify.getJob(record.projectId, jobId);
  } catch (error) {
    return readFailed(ctx, record, memory, error, now);
  }
  memory.refusedReads = 0;
  memory.notFoundReads = 0;
  if (job.unrecognizedStatus !== undefined && job.unrecognizedStatus !== memory.unrecognizedStatus) {
    ctx.logger.warn(
      `job ${jobId}: Mintlify answered the status ${JSON.stringify(job.unrecognizedStatus.slice(0, 40))}, which this version does not know; the job is still followed, and its card shows that status as Mintlify gave it`,
    );
  }
  memory.unrecognizedStatus = job.unrecognizedStatus;

  // A follow-up the agent has not taken up yet: the job still reads as it ended before.
  if (followUpNotTakenUp(record, job, ctx.now(), ctx.followUpGraceMs ?? FOLLOW_UP_GRACE_MS)) {
    return { kind: 'following' } as const;
  }
  const next = applyAgentJob(record, job, ctx.now());
  const finished = FINISHED.has(next.status);
  memory.slow = !finished && now - memory.activeSince >= ctx.config.poll.slowAfterMs;
  // The lists (the status list, the Home tab) first, so that they say what the card is about to.
  if (viewChanged(record, next) && record.threadTs !== null) await listAsRead(ctx, record, next);
  const toldSlack = await tellSlack(ctx, record, next, memory, now);
  if (!toldSlack) return { kind: 'retry' } as const;

  if (viewChanged(record, next)) {
    // A follow-up may have reached the job while we read it and told Slack: then its record is newer
    // than our answer (reopened, or still active as Mintlify took it up), and the job is read again.
    let overtaken = false;
    const at = ctx.now();
    const saved = await ctx.records.update(jobId, (current) => {
      overtaken = writtenSince(record, current);
      if (!overtaken) return applyAgentJob(current, job, at);
      return finished ? reopenedAsTold(record, current, at) : current;
    });
    if (overtaken) {
      if (finished && saved && !FINISHED.has(saved.status) && saved.goneAt === undefined) {
        // The card and the thread were just told of an end the job no longer has: the follow-up's
        // work is a round of its own, the card shows it working (now, and again at the next check
        // should Slack not take it), and its end is told as that round's.
        memory.activeSince = now;
        memory.redrawCard = true;
        if (!memory.cardGone && !memory.slackGone && (await editJobCard(ctx, saved)) === 'done') {
          memory.redrawCard = false;
        }
        ctx.onJobChanged?.(saved);
      }
      return { kind: 'following' } as const;
    }
    // The requester's Home tab lists this job: let it show the change (the refresher throttles).
    if (saved) ctx.onJobChanged?.(saved);
  }
  return finished ? ({ kind: 'done', why: 'finished' } as const) : ({ kind: 'following' } as const);
}

/**
 * Notes what Mintlify answered on the record for the lists alone (`lastRead`), unless someone wrote
 * the record since it was read (then the job is read again anyway).
 */
async function listAsRead(ctx: JobsContext, record: JobRecord, next: JobRecord): Promise<void> {
  const lastRead = {
    status: next.status,
    prLink: next.prLink,
    ...(next.reportedStatus ? { reportedStatus: next.reportedStatus } : {}),
  };
  // Noted already by a check before this one, which Slack did not let finish.
  if (JSON.stringify(record.lastRead) === JSON.stringify(lastRead)) return;
  const listed = await ctx.records.update(record.jobId, (current) =>
    writtenSince(record, current) ? current : { ...current, lastRead },
  );
  if (listed?.lastRead) ctx.onJobChanged?.(listed);
}

/**
 * `current` after a follow-up reached the job while a check told Slack of the end of `read`'s round:
 * Mintlify took it up (answered it as working), so the record stayed in that round, whose end the
 * thread was just told. A new round then, as for a follow-up to a finished job (applyAgentJob).
 */
function reopenedAsTold(read: JobRecord, current: JobRecord, now: Date): JobRecord {
  if (FINISHED.has(current.status) || current.goneAt !== undefined || current.round !== read.round) {
    return current;
  }
  // The new round is the replies' that came as the end was told (their authors are new, or the
  // latest, who may have steered the round before too): the others were told of its end.
  const earlier = new Set(read.steeredBy ?? []);
  const steered = current.steeredBy ?? [];
  const latest = steered.at(-1);
  return {
    ...current,
    round: current.round + 1,
    roundStartedAt: now.toISOString(),
    finishedAt: null,
    steeredBy: steered.filter((user) => !earlier.has(user) || user === latest),
  };
}

/** Someone saved the job's own state since `read` was read (a follow-up, another check). */
const writtenSince = (read: JobRecord, current: JobRecord) =>
  current.updatedAt !== read.updatedAt || current.round !== read.round;

/** Redraws the card and posts the news; false when Slack should be asked again at the next check. */
async function tellSlack(
  ctx: JobsContext,
  record: JobRecord,
  next: JobRecord,
  memory: JobMemory,
  now: number,
): Promise<boolean> {
  if (record.threadTs === null || memory.slackGone) return true; // the record alone is kept up to date
  let pending = false;

  if (record.round === 0) memory.redrawCard = false; // a new job's card was drawn a moment ago
  // The card shows where the agent works too: Mintlify may name the branch only once under way.
  const cardChanged =
    next.status !== record.status ||
    next.prLink !== record.prLink ||
    next.reportedStatus !== record.reportedStatus ||
    next.repository !== record.repository ||
    next.ref !== record.ref ||
    next.model !== record.model;
  if ((cardChanged || memory.redrawCard) && !memory.cardGone) {
    const delivery = await editJobCard(ctx, next);
    if (delivery === 'done') memory.redrawCard = false;
    else if (delivery === 'retry') pending = true;
    else if (delivery === 'card_gone') {
      memory.cardGone = true;
      ctx.logger.info(`the card of job ${record.jobId} was deleted; its news goes to the thread instead`);
    } else stopTellingSlack(ctx, record, memory);
  }

  for (const notice of noticesFor(next, record, memory, now)) {
    if (memory.slackGone) break;
    const outcome = await announceOnce(ctx, record.jobId, notice);
    if (outcome === 'channel_gone') stopTellingSlack(ctx, record, memory);
    else if (outcome === 'retry' || outcome === 'busy') pending = true;
  }
  return !pending;
}

/** The news this check owes the thread, leaving out what the record says was posted already. */
function noticesFor(next: JobRecord, before: JobRecord, memory: JobMemory, now: number): Notice[] {
  const notice = (kind: JobNewsKind) => makeNotice(kind, next, memory, now);
  const notices: Notice[] = [];
  if (FINISHED.has(next.status)) notices.push(notice(next.status as JobNewsKind));
  // Not for a status this version does not know: "I'll post here when it ends" may never come true.
  else if (memory.slow && !next.reportedStatus) notices.push(notice('slow'));
  return notices.filter(({ key }) => !before.announced.includes(key));
}

async function readFailed(
  ctx: JobsContext,
  record: JobRecord,
  memory: JobMemory,
  error: unknown,
  now: number,
) {
  const { jobId } = record;
  if (error instanceof NotFoundError) {
    // v2 lists no jobs: a job given up is lost for good, so one 404 (a job Mintlify does not know
    // yet, or a passing fault of its own) is read again before it counts.
    memory.notFoundReads = (memory.notFoundReads ?? 0) + 1;
    if (memory.notFoundReads < NOT_FOUND_READS_BEFORE_GONE) {
      ctx.logger.info(`job ${jobId}: Mintlify answered 404; reading it once more before giving it up`);
      return { kind: 'retry' } as const;
    }
    ctx.logger.info(`job ${jobId} is gone from Mintlify (404); following it no more`);
    const gone = makeNotice('gone', record, memory, now);
    if (record.threadTs !== null && !memory.slackGone && !record.announced.includes(gone.key)) {
      const outcome = await announceOnce(ctx, jobId, gone);
      if (outcome === 'channel_gone') stopTellingSlack(ctx, record, memory);
      if (outcome === 'retry' || outcome === 'busy') return { kind: 'retry' } as const;
    }
    const goneAt = new Date(now).toISOString();
    // The card says so, rather than "Working on it" for good: before the record, so that a card edit
    // Slack did not take is tried again at the next check (the job still on the unfinished list).
    if (!memory.slackGone && (await editJobCard(ctx, { ...record, goneAt })) === 'retry') {
      return { kind: 'retry' } as const;
    }
    // Out of the unfinished list, so a restart does not follow (and ask Mintlify about) it again.
    const updated = await ctx.records.update(jobId, (current) => ({ ...current, goneAt }));
    if (updated) ctx.onJobChanged?.(updated); // the Home tab and the status list say so too
    return { kind: 'done', why: 'gone' } as const;
  }
  if (error instanceof UnauthorizedError || error instanceof ForbiddenError) {
    // The card would say "Working on it" for as long as nobody fixes the key: the thread is told, once.
    memory.refusedReads = (memory.refusedReads ?? 0) + 1;
    const refused = makeNotice('refused', record, memory, now, error.kind);
    if (
      memory.refusedReads >= REFUSED_READS_BEFORE_NOTICE &&
      record.threadTs !== null &&
      !memory.slackGone &&
      !record.announced.includes(refused.key)
    ) {
      const outcome = await announceOnce(ctx, jobId, refused);
      if (outcome === 'channel_gone') stopTellingSlack(ctx, record, memory);
    }
    return { kind: 'retry', problem: error } as const;
  }
  if (error instanceof RateLimitedError) {
    return { kind: 'rate_limited', retryAfterMs: error.retryAfterMs } as const;
  }
  if (error instanceof SchemaError) {
    if (!memory.schemaLogged) {
      ctx.logger.warn(
        `job ${jobId}: Mintlify answered in a shape the published schema does not allow (${error.problems.join('; ')}); body starts ${JSON.stringify(error.bodySnippet)}. Still following it; it will be read again later.`,
      );
    }
    memory.schemaLogged = true;
    return { kind: 'retry' } as const;
  }
  if (isPassingFailure(error)) {
    ctx.logger.debug(`job ${jobId}: ${error.message}; checking again later`);
    return { kind: 'retry' } as const;
  }
  if (isMintlifyError(error)) return { kind: 'retry', problem: error } as const;
  throw error;
}

function makeNotice(
  kind: JobNewsKind,
  record: JobRecord,
  memory: JobMemory,
  now: number,
  refusal?: 'unauthorized' | 'forbidden',
): Notice {
  const when = {
    now: new Date(now),
    activeSince: new Date(memory.activeSince ?? now),
  };
  return {
    key: noticeKey(record.round, kind),
    round: record.round,
    text: jobNewsText(kind, record, when, refusal),
  };
}

/** Finished, and nothing left to tell: its end was announced, or it has no thread we can post in. */
function isSettled(record: JobRecord, memory: JobMemory): boolean {
  if (!FINISHED.has(record.status)) return false;
  if (record.threadTs === null || memory.slackGone) return true;
  return record.announced.includes(noticeKey(record.round, record.status));
}

/** What the card and the record show changed (not just `updatedAt`). */
function viewChanged(before: JobRecord, after: JobRecord): boolean {
  return (
    before.status !== after.status ||
    before.prLink !== after.prLink ||
    before.round !== after.round ||
    before.repository !== after.repository ||
    before.ref !== after.ref ||
    before.model !== after.model ||
    before.followUp !== after.followUp ||
    before.reportedStatus !== after.reportedStatus
  );
}

function stopTellingSlack(ctx: JobsContext, record: JobRecord, memory: JobMemory): void {
  if (memory.slackGone) return;
  memory.slackGone = true;
  ctx.logger.warn(
    `Slack no longer lets me post in ${record.channel} (archived or deleted, or I was removed): job ${record.jobId} is still followed and its record kept, without messages`,
  );
}
