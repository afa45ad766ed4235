import type { AgentJob, JobStatus } from '../mintlify/index.js';
import type { Store } from '../store/store.js';

/** Where a job was started from: every door leads to the same record, card and thread. */
export type JobDoor = 'command' | 'mention' | 'shortcut' | 'dm';

/** `unknown`: we have not heard from Mintlify since the record was written (after a restart, say). */
export type JobState = JobStatus | 'unknown';

export const FINISHED: ReadonlySet<JobState> = new Set(['completed', 'failed', 'archived']);

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
  /** Notifications already posted in the thread, as `round:status` keys. */
  announced: string[];
  /** The start that created the job: its lease guards the first post of the card. */
  startId?: string;
  /**
   * Set while the card is not known to be posted: the thread it goes in (null: a message of its
   * own) and when its post began. The follower posts it, or finds it posted, after a crash.
   */
  pendingCard?: { threadTs: string | null; since: string };
  /** Notifications whose post began but is not known to have landed (key -> when): looked for before posting again. */
  noticesInFlight?: Record<string, string>;
}

export const DISPLAY_PROMPT_MAX = 600;
const RECENT_PER_CHANNEL = 50;
const RECENT_PER_USER = 50;

const jobKey = (jobId: string) => `job:${jobId}`;
const threadKey = (channel: string, threadTs: string) => `thread:${channel}:${threadTs}`;
const UNFINISHED = 'jobs:unfinished';
const channelIndex = (channel: string) => `jobs:channel:${channel}`;
const userIndex = (user: string) => `jobs:user:${user}`;

/** Fills the record's view of the job from what Mintlify answered. */
export function applyAgentJob(record: JobRecord, job: AgentJob, now: Date): JobRecord {
  const status = job.status ?? record.status;
  const reopened = FINISHED.has(record.status) && status === 'active';
  return {
    ...record,
    status,
    round: reopened ? record.round + 1 : record.round,
    prLink: job.prLink === undefined ? record.prLink : job.prLink,
    repository: job.source?.repository ?? record.repository,
    ref: job.source?.ref === undefined ? record.ref : job.source.ref,
    model: job.model ?? record.model,
    updatedAt: now.toISOString(),
    finishedAt: FINISHED.has(status) ? (record.finishedAt ?? now.toISOString()) : null,
  };
}

/** The one place that reads and writes job records and their lookups. */
export class JobRecords {
  constructor(private readonly store: Store) {}

  get(jobId: string): Promise<JobRecord | undefined> {
    return this.store.kv.get<JobRecord>(jobKey(jobId));
  }

  async byThread(channel: string, threadTs: string): Promise<JobRecord | undefined> {
    const jobId = await this.store.kv.get<string>(threadKey(channel, threadTs));
    return jobId === undefined ? undefined : this.get(jobId);
  }

  /** Writes the record and keeps the indexes (unfinished, per channel, per person) in step. */
  async save(record: JobRecord): Promise<void> {
    const score = Date.parse(record.createdAt);
    const { atomic, kv } = this.store;
    await kv.set(jobKey(record.jobId), record);
    await Promise.all([
      FINISHED.has(record.status) || record.goneAt
        ? atomic.indexRemove(UNFINISHED, record.jobId)
        : atomic.indexAdd(UNFINISHED, record.jobId, score),
      atomic.indexAdd(channelIndex(record.channel), record.jobId, score, RECENT_PER_CHANNEL),
      atomic.indexAdd(userIndex(record.requestedBy), record.jobId, score, RECENT_PER_USER),
      record.threadTs === null ? undefined : kv.set(threadKey(record.channel, record.threadTs), record.jobId),
    ]);
  }

  /** Reads, changes and writes a record; undefined when it does not exist. */
  async update(jobId: string, change: (record: JobRecord) => JobRecord): Promise<JobRecord | undefined> {
    const record = await this.get(jobId);
    if (!record) return undefined;
    const next = change(record);
    await this.save(next);
    return next;
  }

  unfinishedIds(): Promise<string[]> {
    return this.store.atomic.indexAll(UNFINISHED);
  }

  recentInChannel(channel: string, limit: number): Promise<JobRecord[]> {
    return this.recent(channelIndex(channel), limit);
  }

  recentForUser(user: string, limit: number): Promise<JobRecord[]> {
    return this.recent(userIndex(user), limit);
  }

  private async recent(index: string, limit: number): Promise<JobRecord[]> {
    const ids = await this.store.atomic.indexNewest(index, limit);
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((record): record is JobRecord => record !== undefined);
  }
}
