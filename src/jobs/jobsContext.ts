import type { Logger, webApi } from '@slack/bolt';
import type { Config } from '../config.js';
import type { SlackTokenState } from '../slack/slackToken.js';
import type { MintlifyClient } from '../mintlify/index.js';
import type { RateLedger } from '../store/rateLedger.js';
import type { Store } from '../store/store.js';
import type { JobRecord, JobRecords } from './jobRecord.js';
import type { JobStarts } from './jobStarts.js';

/** What the job use cases need, built once by the worker role (worker.ts) and passed in. */
export interface JobsContext {
  config: Config;
  mintlify: Pick<
    MintlifyClient,
    'createJob' | 'getJob' | 'sendMessage' | 'deployPreview' | 'deploymentStatus'
  >;
  store: Store;
  records: JobRecords;
  /** Starts under way, so one cut short by a crash is told to the person. */
  starts: JobStarts;
  ledger: RateLedger;
  slack: webApi.WebClient;
  /** Posts what is looked for by its mark before it is posted again (cards, notices): sends each call once. */
  slackOnce: Pick<webApi.WebClient, 'chat'>;
  /** Whether Slack refuses the bot's token now (a start then makes no job at Mintlify). */
  slackToken?: Pick<SlackTokenState, 'refusal' | 'refusedElsewhere'>;
  /** The bot's own bot id (auth.test): what it posted carries it. */
  botId: string;
  logger: Logger;
  now: () => Date;
  /**
   * Aborted once the bot stops its work: what waits in the background for Redis to answer gives up
   * then, and says what is left undone.
   */
  stopping: AbortSignal;
  /** How long a job may read as it ended before, after a follow-up (default FOLLOW_UP_GRACE_MS, checkJob.ts). */
  followUpGraceMs?: number;
  /** Called when a job starts or is reopened, so the follower picks it up. */
  onJobActive: (jobId: string) => void;
  /** Called when a job's check ends with the job finished: its pull request's preview is asked for, if due. */
  onJobFinished?: (record: JobRecord) => Promise<void>;
  /** Called when what a person would see of a job changed (its status, its pull request): the Home tab refreshes. */
  onJobChanged?: (record: JobRecord) => void;
}
