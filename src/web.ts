import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { format } from 'node:util';
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
import { fixesStarting } from './digest/fixNote.js';
import { InFlight } from './inFlight.js';
import * as actions from './listeners/actions/index.js';
import * as commands from './listeners/commands/index.js';
import { type ListenerContext, notQueuedReason } from './listeners/context.js';
import { createEnqueue } from './listeners/enqueue.js';
import * as events from './listeners/events/index.js';
import * as shortcuts from './listeners/shortcuts/index.js';
import * as views from './listeners/views/index.js';
import type { WorkQueue } from './queue/queue.js';
import type { SlackRequest } from './requests/slackRequest.js';
import { originCheck, type SlackIdentity } from './slack/slackIdentity.js';
import type { Store } from './store/store.js';
import { withTimeout } from './withTimeout.js';

/** For the shortcut's views.open: its trigger is good for 3 s, so a retry must come quickly. */
const OPEN_FORM_RETRIES: webApi.RetryOptions = { retries: 2, factor: 1, minTimeout: 300, maxTimeout: 300 };
/** Long enough for views.open and its retries; the form's trigger is dead after 3 s anyway. */
const OPEN_FORM_MS = 3_000;
/** How long a digest's button waits for the store to say who is starting a job for its item. */
const STARTING_READ_MS = 500;
/** How long a stop waits for running listeners to answer Slack: past the enqueue's wait. */
const ANSWERING_MS = 2_000;
/**
 * How long a request that comes while Slack has not yet confirmed the bot's token waits for it: with
 * the enqueue's wait, within Slack's 3 s. Later, it is refused rather than queued after Slack gave up.
 */
const IDENTITY_WAIT_MS = 1_500;
/** How long Socket Mode gets to open its socket at start (Slack answers within a second or two). */
const SOCKET_OPEN_MS = 30_000;
const SOCKET_NOT_OPEN = `Slack did not open a Socket Mode connection within ${SOCKET_OPEN_MS / 1_000} s (Slack kept failing, could not be reached, or refused SLACK_APP_TOKEN with a code the bot does not know: the "Failed to retrieve a new WSS URL", "http request failed" or "WebSocket error" lines above say which; check that this machine reaches slack.com and wss-primary.slack.com, and that SLACK_APP_TOKEN is an App-Level Token with the connections:write scope)`;

export interface Web {
  /** Starts taking Slack requests; resolves with the HTTP port (HTTP mode) once listening. */
  start(): Promise<{ port: number | undefined }>;
  /** Stops taking requests; what was queued is the worker's. */
  stop(): Promise<void>;
}

/**
 * The web role: one Bolt app whose listeners verify, acknowledge and enqueue. A request is
 * acknowledged once it is on the queue (Bolt's `processBeforeResponse`), so a crash after the
 * ack loses nothing; an event the queue could not take gets an HTTP error, and Slack sends it again.
 */
export function createWeb(
  config: Config,
  options: {
    logger: Logger;
    /** Asked of Slack while the receiver starts: requests wait for it (a wrong token fails them). */
    identity: Promise<SlackIdentity>;
    requests: WorkQueue<SlackRequest>;
    /** Read by a digest's button, for the jobs being started from its item. */
    store: Store;
    /** Tests shorten the Slack client's retry waits. */
    slackRetries?: webApi.RetryOptions;
    /** Tests shorten Socket Mode's hold of an event the queue could not take. */
    holdEventForMs?: number;
    /** Told when the web role cannot go on (Socket Mode could not reconnect): the bot must stop. */
    onFailure?: (error: Error) => void;
  },
): Web {
  const { logger, requests } = options;
  let identity: SlackIdentity | undefined;
  options.identity.then(
    (known) => (identity = known),
    () => {}, // the bot's start fails on it
  );
  const checkOrigin = originCheck(logger);
  const afterAck = new InFlight();
  // Requests whose listener runs (a command's ack comes once it is queued): a stop lets them answer.
  const answering = new InFlight();
  const track: ListenerContext['track'] = (work) => void afterAck.run(() => work);
  const handOff = createEnqueue({
    requests,
    logger,
    socketMode: config.slack.socketMode,
    track,
    ...(options.holdEventForMs ? { holdEventForMs: options.holdEventForMs } : {}),
  });
  const fixesStartingQuickly: ListenerContext['fixesStarting'] = (item) =>
    withTimeout(
      fixesStarting(options.store.atomic, item),
      STARTING_READ_MS,
      'the store did not say whether a job is being started for the item',
    ).catch((error: unknown) => {
      logger.warn(`the digest's form opens without saying who is starting a job: ${String(error)}`);
      return [];
    });
  const ctx: ListenerContext = {
    access: config.access,
    enqueue: handOff.enqueue,
    track,
    fixesStarting: fixesStartingQuickly,
  };
  const receiver = createReceiver(config, logger);
  const httpDoor = receiver instanceof HTTPReceiver ? closingDoor(receiver) : undefined;
  if (receiver instanceof SocketModeReceiver) {
    whenSocketModeFails(receiver, (error) => {
      if (!started) return; // the stop closed the socket meanwhile
      const refused = appTokenRefused(error);
      const failure =
        refused instanceof Error && refused !== error
          ? refused
          : new Error(
              `Slack's Socket Mode client gave up reconnecting (${String(error)}): the bot stops, for its process manager to start it again`,
            );
      logger.error(failure.message);
      options.onFailure?.(failure);
    });
  }
  const app = new App({
    // The one workspace's token and the bot's ids (Bolt's authorize, rather than its `token`, which
    // needs the ids before the receiver listens or asks auth.test for them again).
    authorize: async (_source, body) => {
      const known =
        identity ??
        (await withTimeout(options.identity, IDENTITY_WAIT_MS, 'Slack did not confirm SLACK_BOT_TOKEN'));
      const appId = (body as { api_app_id?: unknown } | undefined)?.api_app_id;
      checkOrigin(known, typeof appId === 'string' ? { appId } : {});
      return { botToken: config.slack.botToken, botId: known.botId, botUserId: known.botUserId };
    },
    receiver,
    logger,
    // Without it Bolt resets the logger to INFO, and LOG_LEVEL would be ignored.
    logLevel: config.logLevel as LogLevel,
    // Bolt's conversation store keeps per-conversation state we never read; it costs every request.
    convoStore: false,
    clientOptions: {
      ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
      retryConfig: options.slackRetries ?? OPEN_FORM_RETRIES,
      // A 429's Retry-After outlasts the form's 3-s trigger: the person is told at once instead.
      rejectRateLimitedCalls: true,
    },
  });
  // Socket Mode's alone (see stop()): over HTTP the server's close lets running requests finish.
  if (config.slack.socketMode) {
    app.use(async ({ next }) => {
      await answering.run(next);
    });
  }
  commands.register(app, ctx);
  events.register(app, ctx);
  shortcuts.register(app, ctx);
  views.register(app, ctx);
  actions.register(app, ctx);
  app.error(async (error) => {
    logger.error(`a Slack request was not queued: ${notQueuedReason(error)}`);
    throw error; // answered with an HTTP error, so Slack sends the event again
  });

  let started = false;
  return {
    async start() {
      const server = (
        config.slack.socketMode
          ? await withTimeout(app.start(), SOCKET_OPEN_MS, SOCKET_NOT_OPEN).catch(async (error: unknown) => {
              await app.stop().catch(() => {}); // a socket Slack keeps refusing is tried again for ever
              throw appTokenRefused(error);
            })
          : await app.start(config.port)
      ) as unknown;
      started = true;
      const port = isServer(server) ? (server.address() as AddressInfo | null)?.port : undefined;
      logger.info(
        config.slack.socketMode
          ? 'docs-agent is running in Socket Mode'
          : `docs-agent is listening on port ${port} (POST /slack/events, GET /healthz)`,
      );
      return { port };
    },
    async stop() {
      httpDoor?.close();
      handOff.stop();
      // Once: the bot's stop and a start that was told to stop may both get here.
      if (started) {
        started = false;
        // Socket Mode's receiver closes its socket at once: a command still being queued would lose
        // its ack (Slack shows it failed, and the job runs all the same).
        await answering.drain(ANSWERING_MS);
        await app.stop().catch((error) => logger.warn(`stopping the receiver: ${String(error)}`));
      }
      await afterAck.drain(OPEN_FORM_MS);
    },
  };
}

/**
 * Over HTTP, the stop's "no new requests" for connections kept open between requests too (a load
 * balancer's or a proxy's): the server's close stops new connections and drops idle ones, but one
 * with a request under way stays open after its answer, brings more requests, and holds the close
 * until the forced exit. Once stopping, a request is answered 503 without being queued (Slack sends
 * an event again, to a process still running; a command shows as failed, as it must: nobody is left
 * to take it), and the answers still to come close their connections.
 */
function closingDoor(receiver: HTTPReceiver): { close(): void } {
  let closing = false;
  const underWay = new Set<ServerResponse>();
  const handle = receiver.requestListener;
  receiver.requestListener = (request, response) => {
    if (closing) {
      response.writeHead(503, { connection: 'close' });
      response.end();
      return;
    }
    underWay.add(response);
    response.once('close', () => underWay.delete(response));
    handle(request, response);
  };
  return {
    close() {
      closing = true;
      for (const response of underWay) {
        if (!response.headersSent) response.setHeader('connection', 'close');
      }
    },
  };
}

/**
 * Codes of apps.connections.open that say the app-level token is no good, so that asking again cannot
 * help: it is wrong, revoked, expired or of another kind (a bot token), or lacks connections:write.
 * Slack's Socket Mode client gives up on the first five only, and asks again for ever on the others.
 * Any other failure (fatal_error, internal_error, ratelimited, Slack out of reach) is Slack's passing
 * trouble: the client asks again.
 */
const APP_TOKEN_REFUSALS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'user_removed_from_team',
  'team_disabled',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'missing_scope',
  'no_permission',
]);

/** The parts of Slack's Socket Mode client wrapped here (private in its types). */
interface SocketModeInternals {
  start(): Promise<unknown>;
  retrieveWSSURL(): Promise<string>;
  autoReconnectEnabled: boolean;
  webClient: { apps: { connections: { open(options?: object): Promise<unknown> } } };
}

/**
 * Slack's Socket Mode client opens a new socket on its own when one closes (Slack renews them every
 * few hours). Each try asks apps.connections.open for an address (`retrieveWSSURL`), and a failure
 * it takes for a passing one is tried again from within that try. Two things go wrong there: a
 * refusal of the token outside its own list (token_revoked…) is tried again for ever, leaving the bot
 * up and deaf; and what it gives up on in a try after a passing failure is dropped as an unhandled
 * rejection, which takes the process down with no word of what to do. So a refusal turns its
 * retrying off (it gives up as on invalid_auth), and every try goes through a wrapper: what the
 * client gives up on fails the first start, and after it is handed to `failed`.
 */
function whenSocketModeFails(receiver: SocketModeReceiver, failed: (error: unknown) => void): void {
  const client = receiver.client as unknown as SocketModeInternals;
  const { connections } = client.webClient.apps;
  const open = connections.open; // bound to its web client
  const start = client.start.bind(client);
  const retrieveWSSURL = client.retrieveWSSURL.bind(client);
  // While the first start is under way: a try after a passing failure does not reach it otherwise.
  let failStart: ((error: unknown) => void) | undefined;
  let first = true;
  const giveUp = (error: unknown): Promise<never> => {
    (failStart ?? failed)(error);
    // Left pending: the client only waits on it, and nothing is to follow but the stop.
    return new Promise<never>(() => {});
  };
  connections.open = (options) =>
    open(options).catch((error: unknown) => {
      if (appTokenRefusal(error)) client.autoReconnectEnabled = false;
      throw error;
    });
  // The client looks it up afresh for each try, as for each start.
  client.retrieveWSSURL = () => retrieveWSSURL().catch(giveUp);
  client.start = () => {
    if (!first) return start().catch(giveUp);
    first = false;
    return new Promise<unknown>((resolve, reject) => {
      failStart = reject;
      start().then(resolve, reject);
    }).finally(() => (failStart = undefined));
  };
}

/** The code of Slack's refusal of the app-level token (see APP_TOKEN_REFUSALS), if it is one. */
function appTokenRefusal(error: unknown): string | undefined {
  const code = (error as { data?: { error?: unknown } } | undefined)?.data?.error;
  return typeof code === 'string' && APP_TOKEN_REFUSALS.has(code) ? code : undefined;
}

/** Slack refused the app-level token as Socket Mode opened: said in plain words, naming the variable. */
function appTokenRefused(error: unknown): unknown {
  const code = appTokenRefusal(error);
  if (!code) return error;
  return new Error(
    `Slack refused SLACK_APP_TOKEN (${code}): copy the App-Level Token (xapp-…, with the connections:write scope) again from "Basic Information" > App-Level Tokens`,
  );
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
      logger: withoutEnvelopeSecrets(logger),
      // Bolt hands installerOptions.clientOptions to the Socket Mode client (apps.connections.open).
      // No HTTP server in Socket Mode (no custom routes): it needs no port.
      ...(config.slack.apiUrl
        ? { installerOptions: { clientOptions: { slackApiUrl: config.slack.apiUrl } } }
        : {}),
    });
  }
  return new HTTPReceiver({
    signingSecret: config.slack.signingSecret ?? '',
    endpoints: '/slack/events',
    customRoutes: [healthz],
    // The ack goes back once the listener has queued the request, not before.
    processBeforeResponse: true,
    logger: withSignatureHints(logger),
  });
}

/**
 * The receiver's logger, whose warning about a request it could not verify also says what to
 * check: Bolt's own line names neither the variable nor the clock. A POST to another path (a
 * Request URL typed wrong in the app's settings) is a warning with where Slack's requests go;
 * Bolt says it at info, which LOG_LEVEL=warn hides.
 */
function withSignatureHints(logger: Logger): Logger {
  // Once per path: on a public host, scanners POST to many.
  const wrongPaths = new Set<string>();
  return {
    ...logger,
    info: (...messages: unknown[]) => {
      const [first, ...rest] = messages;
      if (typeof first === 'string' && first.startsWith('Unhandled HTTP request (POST)')) {
        if (wrongPaths.has(first) || wrongPaths.size >= 100) return logger.info(...messages);
        wrongPaths.add(first);
        return logger.warn(
          `${first}: Slack's requests go to POST /slack/events (check the Request URLs of the app's slash command, event subscriptions and interactivity)`,
          ...rest,
        );
      }
      return logger.info(...messages);
    },
    warn: (...messages: unknown[]) => {
      const [first, ...rest] = messages;
      if (typeof first === 'string' && first.includes('signature mismatch')) {
        return logger.warn(
          `${first} (check SLACK_SIGNING_SECRET: this app's Signing Secret, from "Basic Information")`,
          ...rest,
        );
      }
      if (typeof first === 'string' && first.includes('request is stale')) {
        return logger.warn(
          `${first} (check this machine's clock: Slack's requests carry the time they were sent)`,
          ...rest,
        );
      }
      return logger.warn(...messages);
    },
  };
}

/**
 * A field of Slack's requests that is a secret: the verification token (of the app's settings), and
 * a response_url (anyone holding it may post in the channel for half an hour).
 */
const SECRET_FIELDS = /("(?:token|response_url)"\s*:\s*)"(?:[^"\\]|\\.)*"/g;
/** The ticket in the socket's URL (`apps.connections.open`'s answer): it opens the app's connection. */
const SOCKET_TICKET = /([?&]ticket=)[^&"\s\\]+/g;

/**
 * The Socket Mode receiver's logger. At debug, Slack's Socket Mode client logs each envelope as it
 * came, verification token and response_url included (over HTTP, Bolt logs no request body): their
 * values are redacted, and the rest of the line (what was asked, by whom) is kept.
 */
function withoutEnvelopeSecrets(logger: Logger): Logger {
  const redacted =
    (write: (...messages: unknown[]) => void) =>
    (...messages: unknown[]) =>
      write(
        format(...messages)
          .replace(SECRET_FIELDS, '$1"[redacted]"')
          .replace(SOCKET_TICKET, '$1[redacted]'),
      );
  return {
    ...logger,
    debug: redacted(logger.debug),
    info: redacted(logger.info),
    warn: redacted(logger.warn),
    error: redacted(logger.error),
  };
}

function isServer(value: unknown): value is Server {
  return typeof value === 'object' && value !== null && 'address' in value;
}
