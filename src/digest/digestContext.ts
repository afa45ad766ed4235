import type { Logger, webApi } from '@slack/bolt';
import type { Config } from '../config.js';
import type { MintlifyClient } from '../mintlify/index.js';
import type { Store } from '../store/store.js';
import type { CollectOptions } from './collectVisitors.js';
import { DigestRecords } from './digestRecords.js';

/** What the digest use cases need, built once (by the worker role or the one-shot entry) and passed in. */
export interface DigestContext {
  config: Config;
  mintlify: Pick<
    MintlifyClient,
    'visitorsPage' | 'feedbackByPage' | 'feedbackPage' | 'searchesPage' | 'assistantPage'
  >;
  store: Store;
  records: DigestRecords;
  slack: Pick<webApi.WebClient, 'chat' | 'conversations' | 'paginate'>;
  /** Posts the digests: sends each call once (`SENT_ONCE`, slack/postedMessages.ts). */
  slackOnce: Pick<webApi.WebClient, 'chat'>;
  /** The bot's own bot id (auth.test): what it posted carries it. */
  botId: string;
  logger: Logger;
  now: () => Date;
  /** Aborted when the bot stops: a digest waiting out the rate limit stops waiting. */
  shutdown: AbortSignal;
  /** Tests and the benchmark shorten the waits of the rate-limit loop. */
  collect?: Pick<CollectOptions, 'sleep' | 'backoffMs'>;
}

export function createDigestContext(
  parts: Omit<DigestContext, 'records' | 'now'> & { now?: () => Date },
): DigestContext {
  return { ...parts, records: new DigestRecords(parts.store), now: parts.now ?? (() => new Date()) };
}
