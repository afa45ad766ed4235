import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  App,
  type CustomRoute,
  HTTPReceiver,
  type Logger,
  type LogLevel,
  type Receiver,
  SocketModeReceiver,
  type webApi,
} from '@slack/bolt';
import type { Config } from './config.js';
import { createDigestContext, type DigestContext } from './digest/digestContext.js';
import { digestSchedule } from './digest/digestSchedule.js';
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
import * as replayedRequests from './listeners/replayedRequests.js';
import { requestSignature } from './listeners/replayedRequests.js';
import * as shortcuts from './listeners/shortcuts/index.js';
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

export interface DocsAgentOptions {
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

export interface DocsAgent {
  readonly app: App;
  readonly store: Store;
  readonly context: ListenerContext;
  readonly follower: JobFollower;
  /** Starts taking Slack requests; resolves with the HTTP port (HTTP mode) once listening. */
  start(): Promise<{ port: number | undefined }>;
  /** Stops taking requests, lets in-flight work finish, then closes connections. */
  stop(): Promise<void>;
}

/** Wires Bolt, the store, the Mintlify client and the listeners into one bot. */
export async function createDocsAgent(config: Config, options: DocsAgentOptions): Promise<DocsAgent> {
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

  const receiver = createReceiver(config, logger);
  const app = new App({
    token: config.slack.botToken,
    receiver,
    logger,
    // Without it Bolt resets the logger to INFO, and LOG_LEVEL would be ignored.
    logLevel: config.logLevel as LogLevel,
    // Bolt's conversation store keeps per-conversation state we never read; it costs every request.
    convoStore: false,
    clientOptions: {
      ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
      retryConfig: options.slackRetries ?? SLACK_RETRIES,
    },
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
  replayedRequests.register(app, context); // first: a replay reaches no door
  commands.register(app, context);
  events.register(app, context);
  shortcuts.register(app, context);
  views.register(app, context);
  actions.register(app);
  app.error(async (error) => {
    logger.error(`unhandled error in a listener: ${String(error)}`);
  });

  let started = false;
  return {
    app,
    store,
    context,
    follower,
    async start() {
      await verifySlackToken(app, logger);
      const server = (await app.start(config.port)) as unknown;
      started = true;
      await follower.start();
      schedule?.start();
      const port = isServer(server) ? (server.address() as AddressInfo | null)?.port : undefined;
      logger.info(
        config.slack.socketMode
          ? 'docs-agent is running in Socket Mode'
          : `docs-agent is listening on port ${port} (POST /slack/events, GET /healthz)`,
      );
      return { port };
    },
    async stop() {
      if (started) await app.stop().catch((error) => logger.warn(`stopping the receiver: ${String(error)}`));
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

function createReceiver(config: Config, logger: Logger): Receiver {
  const healthz: CustomRoute = {
    path: '/healthz',
    method: ['GET'],
    handler: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    },
  };
  if (config.slack.socketMode && config.slack.appToken) {
    return new SocketModeReceiver({
      appToken: config.slack.appToken,
      logger,
      customRoutes: [healthz],
      // Bolt hands installerOptions.clientOptions to the Socket Mode client (apps.connections.open).
      installerOptions: {
        port: config.port,
        ...(config.slack.apiUrl ? { clientOptions: { slackApiUrl: config.slack.apiUrl } } : {}),
      },
    });
  }
  return new HTTPReceiver({
    signingSecret: config.slack.signingSecret ?? '',
    endpoints: '/slack/events',
    customRoutes: [healthz],
    customPropertiesExtractor: requestSignature,
    logger,
  });
}

/** A wrong token fails at start with a clear line, not on the first request. */
async function verifySlackToken(app: App, logger: Logger): Promise<void> {
  try {
    const auth = await app.client.auth.test();
    logger.info(`connected to Slack workspace ${auth.team ?? auth.team_id} as @${auth.user}`);
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    throw new Error(
      code === 'invalid_auth' || code === 'not_authed' || code === 'token_revoked'
        ? `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions" after installing the app`
        : `could not reach Slack to check SLACK_BOT_TOKEN: ${code ?? String(error)}`,
    );
  }
}

function isServer(value: unknown): value is Server {
  return typeof value === 'object' && value !== null && 'address' in value;
}
