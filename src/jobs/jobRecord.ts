import type { AgentJob, JobStatus } from '../mintlify/index.js';
import { type Store, updateRecord } from '../store/store.js';

/** Where a job was started from: every door leads to the same record, card and thread. */
export type JobDoor = 'command' | 'mention' | 'shortcut' | 'dm';

/** `unknown`: we have not heard from Mintlify since the record was written (after a restart, say). */
export type JobState = JobStatus | 'unknown';

export const FINISHED: ReadonlySet<JobState> = new Set(['completed', 'failed', 'archived']);

/** A preview deployment of the job's branch, asked for once its pull request was ready. */
export interface JobPreview {
  /** The round whose pull request it shows: a later round's deployment replaces it. */
  round: number;
  branch: string;
  /**
   * `asked`: the request is under way; `queued`/`in_progress`: Mintlify deploys it; `untracked`:
   * Mintlify took the request but gave no deployment to follow (no `statusId`); `unanswered`:
   * Mintlify answered neither request (the second a while after the first), and may have taken one.
   */
  state: 'asked' | 'queued' | 'in_progress' | 'success' | 'failure' | 'untracked' | 'unanswered';
  askedAt: string;
  statusId?: string;
  /** Where it will be; shown only once the deployment succeeded. */
  url?: string;
  /** Why it failed, in Mintlify's words or ours. */
  summary?: string;
  /** Its end is on the card (and, deployed, told in the thread): until then it is told again. */
  shown?: true;
}

/** The preview the card shows: the latest round's only (a redeploy replaces it). */
export function currentPreview(record: { preview?: JobPreview; round: number }): JobPreview | undefined {
  return record.preview?.round === record.round ? record.preview : undefined;
}

/** A Slack message a job is about: one a person chose with the shortcut, or a digest's item. */
export interface JobAbout {
  link: string;
  what: 'message' | 'digest';
  /** Its channel, and whether the card was asked to go in its thread (where no link is needed). */
  channel: string;
  under?: true;
}

/** One agent job and the Slack thread that belongs to it. */
export interface JobRecord {
  jobId: string;
  projectId: string;
  channel: string;
  /** The job's thread: replies under this ts steer the job. Null until the card is posted. */
  threadTs: string | null;
  /** The job card's ts (the thread's parent for a slash command; a reply in the thread otherwise). */
  cardTs: string | null;
  requestedBy: string;
  /** The instruction as shown on the card (trimmed); the job received it in full. */
  prompt: string;
  door: JobDoor;
  /** The message the job is about: the card links it, unless the card is in that message's thread. */
  about?: JobAbout;
  /**
   * Replies in the job's thread up to this ts (this one included) were in its prompt: the thread
   * before its mention (and the mention), or the thread as the shortcut read it.
   */
  contextBefore?: string;
  status: JobState;
  prLink: string | null;
  repository: string | null;
  ref: string | null;
  model: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** Set when Mintlify answered 404 for the job: it is gone, and no longer followed. */
  goneAt?: string;
  /** Goes up each time a finished job is reopened (by a follow-up), so its next end is announced too. */
  round: number;
  /** When the latest reopen happened (absent in round 0, which began at `createdAt`). */
  roundStartedAt?: string;
  /** Who sent follow-ups in this round: its end is told to them too. */
  steeredBy?: string[];
  /** A status Mintlify last answered that this version does not know (its card shows it as is). */
  reportedStatus?: string;
  /** Notifications already posted in the thread, as `round:status` keys. */
  announced: string[];
  /** The start that created the job: its lease guards the first post of the card. */
  startId?: string;
  /**
   * Set while the card is not known to be posted: the thread it goes in (null: a message of its
   * own) and when its post began. The follower posts it, or finds it posted, after a crash.
   */
  pendingCard?: {
    threadTs: string | null;
    since: string;
    /** The channel refused it: it goes to the requester's DM (Slack failed that post for a while). */
    inDm?: true;
  };
  /**
   * Why the channel refused the card for good (set as its pending card is dropped), so that a start
   * run again after a crash moves the job to the requester's DM with the right words there.
   */
  cardRefused?: 'not_in_channel' | 'not_allowed' | 'other';
  /** Notifications whose post began but is not known to have landed (key -> when): looked for before posting again. */
  noticesInFlight?: Record<string, string>;
  /** The preview deployment of the pull request's branch (PREVIEWS). */
  preview?: JobPreview;
  /**
   * Set when a follow-up was sent to a job Mintlify still answered as finished: the agent takes a
   * message up in the background, so for a while the job may read as it ended before (this status
   * and pull request). Cleared by the first read that says otherwise.
   */
  followUp?: { sentAt: string; status: JobState; prLink: string | null };
  /**
   * What Mintlify last answered while the card and the thread are still being told of it: saved
   * before Slack is, so that the status list and the Home tab say what the card is about to. The
   * record's own status and pull request follow once Slack took everything (so that a post Slack
   * did not take is found again by the next check, or after a crash).
   */
  lastRead?: { status: JobState; prLink: string | null; reportedStatus?: string };
}

/** The job as the lists show it (the status list, the Home tab): as Mintlify last answered. */
export function asListed(record: JobRecord): JobRecord {
  const { lastRead, reportedStatus: _shownBefore, ...rest } = record;
  if (!lastRead) return record;
  return { ...rest, ...lastRead };
}

export const DISPLAY_PROMPT_MAX = 600;
const RECENT_PER_CHANNEL = 50;
const RECENT_PER_USER = 50;

const jobKey = (jobId: string) => `job:${jobId}`;
const threadKey = (channel: string, threadTs: string) => `thread:${channel}:${threadTs}`;
const UNFINISHED = 'jobs:unfinished';
const channelIndex = (channel: string) => `jobs:channel:${channel}`;
const userIndex = (user: string) => `jobs:user:${user}`;
const INDEX_PASSES = 5;

const unfinished = (record: JobRecord) => !FINISHED.has(record.status) && !record.goneAt;

/** Fills the record's view of the job from what Mintlify answered. */
export function applyAgentJob(record: JobRecord, job: AgentJob, now: Date): JobRecord {
  const status = job.status ?? record.status;
  const reopened = FINISHED.has(record.status) && status === 'active';
  // A job Mintlify answered is not gone (a 404 may have been a passing fault of its own).
  const { followUp: _answered, goneAt: _gone, reportedStatus: _reported, lastRead: _read, ...rest } = record;
  return {
    ...rest,
    // A finished job keeps its end on the card, whatever Mintlify answers after it.
    ...(job.unrecognizedStatus && !FINISHED.has(status)
      ? { reportedStatus: job.unrecognizedStatus.slice(0, 40) }
      : {}),
    status,
    round: reopened ? record.round + 1 : record.round,
    ...(reopened ? { roundStartedAt: now.toISOString(), steeredBy: [] } : {}),
    // Null is "none yet" (active) or "no files changed" this round: a pull request, and its branch,
    // named before still stand.
    prLink: job.prLink ?? record.prLink,
    repository: job.source?.repository ?? record.repository,
    ref: job.source?.ref ?? record.ref,
    model: job.model ?? record.model,
    updatedAt: now.toISOString(),
    finishedAt: FINISHED.has(status) ? (record.finishedAt ?? now.toISOString()) : null,
  };
}

/**
 * Fills the record from Mintlify's answer to a follow-up. The agent works on a follow-up in the
 * background (the service promises no state for its answer), so a job answered as finished is
 * taken for reopened all the same: followed, and its next end announced as a new round's.
 */
export function applyFollowUpAnswer(
  record: JobRecord,
  job: AgentJob,
  now: Date,
  /** Who sent it: told when the round ends, with the requester. */
  author?: string,
): JobRecord {
  // What the lists showed of the job's end is no more: the follow-up is its news now.
  const { lastRead: _read, ...answered } = followUpAnswered(record, job, now);
  if (author === undefined) return answered;
  // A round whose end the thread was never told (the reply reopened the job first) ends with this
  // one: whoever steered it hears of its work there, rather than never.
  const earlier = answered.round === record.round || !endTold(record) ? (record.steeredBy ?? []) : [];
  // The latest author last: a reply racing the round's end (checkJob) opens a round of its own for them.
  return { ...answered, steeredBy: [...earlier.filter((user) => user !== author), author] };
}

/**
 * Whether the thread was told of the end of the record's round, or its post is under way: once the
 * round is over, its end is never posted (news of an earlier round would only confuse).
 */
function endTold(record: JobRecord): boolean {
  const told = [...record.announced, ...Object.keys(record.noticesInFlight ?? {})];
  return [...FINISHED].some((status) => told.includes(`${record.round}:${status}`));
}

function followUpAnswered(record: JobRecord, job: AgentJob, now: Date): JobRecord {
  // Sent before the agent took up the one that reopened the job: Mintlify still answers the old end,
  // and both steer the same round (its grace counts from the latest).
  const { followUp } = record;
  if (
    followUp &&
    record.status === 'active' &&
    job.status === followUp.status &&
    (job.prLink == null || job.prLink === followUp.prLink)
  ) {
    return { ...record, updatedAt: now.toISOString(), followUp: { ...followUp, sentAt: now.toISOString() } };
  }
  const next = applyAgentJob(record, job, now);
  if (!FINISHED.has(next.status)) return next;
  // A new round in any case: an end the follower is announcing for the round before (it read it
  // as the follow-up went out) is then that round's, and this one's end is announced too.
  return {
    ...next,
    status: 'active',
    round: record.round + 1,
    roundStartedAt: now.toISOString(),
    finishedAt: null,
    followUp: { sentAt: now.toISOString(), status: next.status, prLink: next.prLink },
  };
}

/**
 * Whether a read of the job is still the end it had before a follow-up the agent has not taken up
 * yet: the same status and pull request, within `graceMs` of the follow-up. After that, the read
 * is believed (the follow-up changed nothing, or the agent finished it on the same pull request).
 */
export function followUpNotTakenUp(record: JobRecord, job: AgentJob, now: Date, graceMs: number): boolean {
  const { followUp } = record;
  if (!followUp || job.status === undefined || !FINISHED.has(job.status)) return false;
  if (now.getTime() - Date.parse(followUp.sentAt) >= graceMs) return false;
  // No pull request in the answer (null: none this round, or not yet) changes nothing of the end.
  return job.status === followUp.status && (job.prLink == null || job.prLink === followUp.prLink);
}

/** Default for JOB_RETENTION_DAYS. */
const DEFAULT_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * The one place that reads and writes job records and their lookups. Each write gives the record,
 * its thread lookup and the channel's and person's lists a time to live of `retentionMs`
 * (JOB_RETENTION_DAYS): a job nobody touched for that long is forgotten with every key about it.
 */
export class JobRecords {
  constructor(
    private readonly store: Store,
    private readonly retentionMs: number = DEFAULT_RETENTION_MS,
  ) {}

  get(jobId: string): Promise<JobRecord | undefined> {
    return this.store.kv.get<JobRecord>(jobKey(jobId));
  }

  /**
   * The job whose thread this is. A thread a job has left (its card moved to its requester's DM, or
   * into the channel from a locked thread) is no longer its: the lookup written for it is read past.
   */
  async byThread(channel: string, threadTs: string): Promise<JobRecord | undefined> {
    const jobId = await this.store.kv.get<string>(threadKey(channel, threadTs));
    const record = jobId === undefined ? undefined : await this.get(jobId);
    if (!record) return undefined;
    const thread = record.threadTs ?? record.pendingCard?.threadTs ?? null;
    const left = record.channel !== channel || (thread !== null && thread !== threadTs);
    return left ? undefined : record;
  }

  /**
   * Writes a new record and its indexes (unfinished, per channel, per person) in one round trip:
   * nothing else writes a record being created, and an index entry whose record is missing is
   * skipped by every reader. When only the index entries land (Redis went away between them), a
   * check may take the job off the unfinished list; the record kept until Redis answers is saved
   * again with its indexes (startJob's keepUntilRecorded).
   */
  async save(record: JobRecord): Promise<void> {
    await Promise.all([
      this.store.kv.set(jobKey(record.jobId), record, this.retentionMs),
      this.index(record),
    ]);
  }

  private async index(record: JobRecord): Promise<void> {
    const score = Date.parse(record.createdAt);
    const thread = record.threadTs ?? record.pendingCard?.threadTs ?? null;
    const { atomic, kv } = this.store;
    await Promise.all([
      unfinished(record)
        ? atomic.indexAdd(UNFINISHED, record.jobId, score)
        : atomic.indexRemove(UNFINISHED, record.jobId),
      atomic.indexAdd(
        channelIndex(record.channel),
        record.jobId,
        score,
        RECENT_PER_CHANNEL,
        this.retentionMs,
      ),
      atomic.indexAdd(userIndex(record.requestedBy), record.jobId, score, RECENT_PER_USER, this.retentionMs),
      // The thread is the job's from its record's first write, its card pending or not: a
      // reply there meanwhile goes to the job.
      thread === null ? undefined : kv.set(threadKey(record.channel, thread), record.jobId, this.retentionMs),
    ]);
  }

  /** Whether a job ever had this thread, whether or not it is still the job's (see byThread). */
  async hadThread(channel: string, threadTs: string): Promise<boolean> {
    return (await this.store.kv.get<string>(threadKey(channel, threadTs))) !== undefined;
  }

  /**
   * Changes a record and writes it, losing no concurrent change of the same record (from this
   * process or another): when someone else wrote it meanwhile, the record is read again and
   * `change` applied again. So `change` may be called more than once and must be a pure function
   * of the record it is given (no side effects; anything it needs from outside, read beforehand).
   * Undefined when the record does not exist; throws RecordContendedError if it kept losing.
   */
  async update(jobId: string, change: (record: JobRecord) => JobRecord): Promise<JobRecord | undefined> {
    // Every change is activity: the record's time to live starts again.
    const next = await updateRecord(this.store, jobKey(jobId), change, this.retentionMs);
    if (!next) return undefined;
    // The record writes are ordered, but two writers' index updates may land in either order: a
    // writer whose record was overtaken redoes the unfinished index (the one whose membership
    // flips) from the newer record, so the last index update to land follows the last record.
    let indexed = next;
    for (let pass = 0; pass < INDEX_PASSES; pass++) {
      await this.index(indexed);
      const latest = await this.get(jobId);
      if (!latest || unfinished(latest) === unfinished(indexed)) break;
      indexed = latest;
    }
    return next;
  }

  /** Starts the record's time to live again (a reply in its thread), changing nothing else. */
  async touch(jobId: string): Promise<void> {
    await this.update(jobId, (record) => record);
  }

  /** Takes a job whose record is gone (expired) off the unfinished list. */
  async forget(jobId: string): Promise<void> {
    await this.store.atomic.indexRemove(UNFINISHED, jobId);
  }

  unfinishedIds(): Promise<string[]> {
    return this.store.atomic.indexAll(UNFINISHED);
  }

  /** The channel's recent jobs, leaving out those whose card moved to their requester's DM. */
  async recentInChannel(channel: string, limit: number): Promise<JobRecord[]> {
    // Read more than asked: some may have moved, and the list should still hold `limit`.
    const records = await this.recent(channelIndex(channel), limit * 3);
    return records.filter((record) => record.channel === channel).slice(0, limit);
  }

  recentForUser(user: string, limit: number): Promise<JobRecord[]> {
    return this.recent(userIndex(user), limit);
  }

  /**
   * The newest `limit` records an index names. Records expire by their last activity, the index is
   * ordered by creation: a job touched lately can outlive newer ones, whose ids are then read past.
   */
  private async recent(index: string, limit: number): Promise<JobRecord[]> {
    for (let asked = limit; ; asked *= 3) {
      const ids = await this.store.atomic.indexNewest(index, asked);
      const records = (await Promise.all(ids.map((id) => this.get(id)))).filter(
        (record): record is JobRecord => record !== undefined,
      );
      if (records.length >= limit || ids.length < asked) return records.slice(0, limit);
    }
  }
}
