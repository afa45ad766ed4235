import { App, type Logger, type LogLevel, type Receiver, webApi } from '@slack/bolt';
import type { Config } from './config.js';
import { createDigestContext, type DigestContext } from './digest/digestContext.js';
import { digestSchedule } from './digest/digestSchedule.js';
import type { ForwardedRequest } from './frontDoor.js';
import { HomeRefresher } from './home/homeRefresher.js';
import { publishHome } from './home/publishHome.js';
import { InFlight } from './inFlight.js';
import { createJobFollower, type JobFollower } from './jobs/followJobs.js';
import { JobRecords } from './jobs/jobRecord.js';
import { JobStarts } from './jobs/jobStarts.js';
import type { JobsContext } from './jobs/jobsContext.js';
import type { Clock } from './jobs/pollSchedule.js';
import * as actions from './listeners/actions/index.js';
import * as commands from './listeners/commands/index.js';
import type { ListenerContext } from './listeners/context.js';
import * as events from './listeners/events/index.js';
import { isReplay } from './listeners/replayedRequests.js';
import * as views from './listeners/views/index.js';
import { MintlifyClient, type MintlifyClientOptions } from './mintlify/index.js';
import { cachedUserNames } from './slack/userNames.js';
import { RateLedger } from './store/rateLedger.js';
import { openStore, type Store } from './store/store.js';
import { USER_AGENT } from './version.js';

/** Slack's own default retries for ~30 minutes; a person waiting on a card should not. */
const SLACK_RETRIES: webApi.RetryOptions = { retries: 4, factor: 2, minTimeout: 500, maxTimeout: 8_000 };
/** What the bot waits for in-flight work when it is told to stop (the platform kills at 10 s or so). */
const DRAIN_MS = 8_000;

export interface WorkOptions {
  logger: Logger;
  /** Tests shorten the Slack client's and Mintlify client's retry waits. */
  slackRetries?: webApi.RetryOptions;
  mintlify?: Partial<Pick<MintlifyClientOptions, 'retry' | 'timeouts' | 'sleep'>>;
  /** Tests shorten the digest's waits for the analytics rate limit. */
  digest?: DigestContext['collect'];
  now?: () => Date;
  /** Tests and benchmarks may drive the job follower's clock and jitter. */
  follow?: { clock?: Clock; random?: () => number };
}

/** Everything the bot does once a request is acknowledged, and what it does on its own. */
export interface Work {
  readonly store: Store;
  readonly context: ListenerContext;
  readonly follower: JobFollower;
  /**
   * Drops a replayed request, else runs the doors for it; tracked, so `stop` waits for it.
   * Never rejects.
   */
  handle(request: ForwardedRequest): Promise<void>;
  /** Requests handed to `handle` and not finished yet. */
  readonly backlog: number;
  /** Starts following jobs and the digest's schedule. */
  start(): Promise<void>;
  /** Stops following, lets in-flight work finish, releases leases, closes connections. */
  stop(): Promise<void>;
}

/**
 * Acknowledged requests, handed to Bolt as if they came from Slack: the doors keep Bolt's
 * listener model (matching, `respond`, `say`, the bot's ids in `context`), and their `ack` is a
 * no-op because the front door has already answered Slack with the same answer.
 */
class ForwardedRequests implements Receiver {
  private app: App | undefined;
  init(app: App): void {
    this.app = app;
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  process(request: ForwardedRequest): Promise<void> {
    if (!this.app) throw new Error('the app is not initialized');
    return this.app.processEvent({ ...request, ack: async () => {} });
  }
}

/** Wires the store, the Mintlify client, the doors, the job follower and the digest together. */
export async function createWork(config: Config, options: WorkOptions): Promise<Work> {
  const { logger } = options;
  const now = options.now ?? (() => new Date());
  const store = await openStore(config.store, logger);
  if (store.kind === 'memory') {
    logger.warn('REDIS_URL is not set: state is kept in memory and every job thread is forgotten on restart');
  }

  const mintlify = new MintlifyClient({
    apiKey: config.mintlify.apiKey,
    baseUrl: config.mintlify.apiUrl,
    userAgent: USER_AGENT,
    ...options.mintlify,
  });

  const clientOptions: webApi.WebClientOptions = {
    ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
    retryConfig: options.slackRetries ?? SLACK_RETRIES,
  };
  let identity: { botUserId: string; botId: string };
  try {
    identity = await verifySlackToken(
      new webApi.WebClient(config.slack.botToken, { ...clientOptions, logger }),
      logger,
    );
  } catch (error) {
    await store.close();
    throw error;
  }

  const requests = new ForwardedRequests();
  const app = new App({
    token: config.slack.botToken,
    // Given, Bolt does not ask auth.test for them again.
    ...identity,
    receiver: requests,
    logger,
    // Without it Bolt resets the logger to INFO, and LOG_LEVEL would be ignored.
    logLevel: config.logLevel as LogLevel,
    // Bolt's conversation store keeps per-conversation state we never read; it costs every request.
    convoStore: false,
    clientOptions,
  });

  const inFlight = new InFlight();
  const jobs: JobsContext = {
    config,
    mintlify,
    store,
    records: new JobRecords(store),
    starts: new JobStarts(store),
    ledger: new RateLedger(store.atomic, () => now().getTime()),
    slack: app.client,
    logger,
    now,
    onJobActive: (jobId) => follower.follow(jobId),
    onJobChanged: (record) => home.refresh(record.requestedBy),
  };
  const home = new HomeRefresher({
    publish: (user) => publishHome(jobs, user),
    logger,
    track: (work) => inFlight.run(work),
  });
  const follower = createJobFollower(jobs, { track: (work) => inFlight.run(work), ...options.follow });
  // Aborted on stop: a digest waiting out the analytics rate limit stops waiting.
  const shutdown = new AbortController();
  const digest = createDigestContext({
    config,
    mintlify,
    store,
    slack: app.client,
    logger,
    now,
    shutdown: shutdown.signal,
    ...(options.digest ? { collect: options.digest } : {}),
  });
  const schedule = digestSchedule(digest);
  const context: ListenerContext = {
    jobs,
    userNames: cachedUserNames(app.client, logger),
    inFlight,
    digest,
    home,
  };
  commands.register(app, context);
  events.register(app, context);
  views.register(app, context);
  actions.register(app);
  app.error(async (error) => {
    logger.error(`unhandled error in a listener: ${String(error)}`);
  });

  let backlog = 0;
  return {
    store,
    context,
    follower,
    get backlog() {
      return backlog;
    },
    handle(request) {
      backlog += 1;
      return inFlight
        .run(async () => {
          if (await isReplay(store.atomic, request.signature)) {
            logger.warn('dropped a replayed Slack request (same signature as one already handled)');
            return;
          }
          await requests.process(request);
        })
        .catch((error: unknown) => logger.error(`a Slack request could not be handled: ${String(error)}`))
        .finally(() => {
          backlog -= 1;
        });
    },
    async start() {
      await follower.start();
      schedule?.start();
    },
    async stop() {
      follower.stop(); // checks already running finish in the drain below
      home.stop();
      shutdown.abort();
      await schedule?.stop();
      if (!(await inFlight.drain(DRAIN_MS)))
        logger.warn(`stopped with ${inFlight.size} request(s) still running`);
      await follower.letGo(); // other instances check this one's jobs at once, not when its leases lapse
      await Promise.allSettled([mintlify.close(), store.close()]);
    },
  };
}

/** A wrong token fails at start with a clear line, not on the first request; the bot's ids come with it. */
async function verifySlackToken(
  client: webApi.WebClient,
  logger: Logger,
): Promise<{ botUserId: string; botId: string }> {
  let auth: webApi.AuthTestResponse;
  try {
    auth = await client.auth.test();
    logger.info(`connected to Slack workspace ${auth.team ?? auth.team_id} as @${auth.user}`);
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    throw new Error(
      code === 'invalid_auth' || code === 'not_authed' || code === 'token_revoked'
        ? `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions" after installing the app`
        : `could not reach Slack to check SLACK_BOT_TOKEN: ${code ?? String(error)}`,
    );
  }
  if (!auth.user_id || !auth.bot_id) {
    throw new Error('SLACK_BOT_TOKEN is not a bot token: use the Bot User OAuth Token (xoxb-...)');
  }
  return { botUserId: auth.user_id, botId: auth.bot_id };
}
