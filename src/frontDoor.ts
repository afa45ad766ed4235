import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  App,
  type CustomRoute,
  HTTPReceiver,
  type Logger,
  type LogLevel,
  type Receiver,
  type RespondArguments,
  type SlashCommand,
  SocketModeReceiver,
  type ViewOutput,
  type ViewResponseAction,
  type webApi,
} from '@slack/bolt';
import type { Config } from './config.js';
import { TOO_BUSY } from './jobs/doorAnswers.js';
import { INSTRUCTION_BLOCK, SEND_TO_AGENT_FORM, SEND_TO_AGENT_SHORTCUT } from './jobs/shortcutModal.js';
import { acknowledgeCommand } from './listeners/commands/docsAgentCommand.js';
import { requestSignature } from './listeners/replayedRequests.js';
import * as shortcuts from './listeners/shortcuts/index.js';
import { acknowledgeForm } from './listeners/views/sendToDocsAgentForm.js';

const OPEN_FORM_RETRIES: webApi.RetryOptions = { retries: 2, factor: 1, minTimeout: 300, maxTimeout: 300 };

/** A Slack request, acknowledged, on its way to the work (same thread or the work thread). */
export interface ForwardedRequest {
  body: Record<string, unknown>;
  retryNum?: number;
  retryReason?: string;
  /** The request's signature (HTTP mode), for the work's replay check. */
  signature?: string;
}

export interface FrontDoor {
  /** Starts taking Slack requests; resolves with the HTTP port (HTTP mode) once listening. */
  start(): Promise<{ port: number | undefined }>;
  /** Stops taking requests; what was forwarded is the work's to finish. */
  stop(): Promise<void>;
}

/**
 * The part of the bot that answers Slack: it checks the signature (Bolt's receiver), acknowledges
 * at once with what the payload alone decides, and hands the request on. It touches no store.
 * It does nothing else (but open the shortcut's form, whose trigger expires in 3 s), so a request
 * never waits behind the work that follows earlier ones (jobs, Redis writes, Slack and Mintlify
 * calls, their garbage): that runs in the work thread.
 */
export async function openFrontDoor(
  config: Config,
  options: {
    logger: Logger;
    forward: (request: ForwardedRequest) => void;
    /** How many forwarded requests the work has not finished yet. */
    backlog: () => number;
    /** From this backlog on, new commands and forms are refused (see `TOO_BUSY`). */
    busyBacklog?: number;
    /** Tests shorten the Slack client's retry waits. */
    slackRetries?: webApi.RetryOptions;
  },
): Promise<FrontDoor> {
  const { logger, forward, backlog } = options;
  const busyBacklog = options.busyBacklog ?? BUSY_BACKLOG;
  let wasBusy = false;
  const busy = () => {
    const waiting = backlog();
    const isBusy = waiting >= busyBacklog;
    if (isBusy !== wasBusy) {
      wasBusy = isBusy;
      if (isBusy)
        logger.warn(`${waiting} requests are waiting for work: new jobs are refused until fewer are`);
      else logger.info('the work has caught up: new jobs are taken again');
    }
    return isBusy;
  };
  const app = new App({
    receiver: createReceiver(config, logger),
    // The token without an auth.test: this side only acknowledges, and the work side checks it.
    authorize: async () => ({ botToken: config.slack.botToken }),
    logger,
    logLevel: config.logLevel as LogLevel,
    convoStore: false,
    ignoreSelf: false, // the work side knows the bot's ids and skips its own messages
    clientOptions: {
      ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
      // For the shortcut's views.open: its trigger is good for 3 s, so a retry must come quickly.
      retryConfig: options.slackRetries ?? OPEN_FORM_RETRIES,
    },
  });
  shortcuts.register(app, config.access);
  app.use(async ({ body: payload, ack, context, next }) => {
    const body = payload as unknown as Record<string, unknown>;
    if (body.type === 'message_action' && body.callback_id === SEND_TO_AGENT_SHORTCUT) return next();
    const { reply, refused } = acknowledgement(config, body, busy);
    // Each kind's ack takes its own answer; `acknowledgement` gives each the one it takes.
    if (ack) await (ack as (answer?: unknown) => Promise<void>)(reply);
    if (refused) return;
    const signature = typeof context.requestSignature === 'string' ? context.requestSignature : undefined;
    forward({
      body,
      retryNum: context.retryNum,
      retryReason: context.retryReason,
      ...(signature ? { signature } : {}),
    });
  });
  app.error(async (error) => {
    logger.error(`could not acknowledge a Slack request: ${String(error)}`);
  });

  let started = false;
  return {
    async start() {
      const server = (await app.start(config.port)) as unknown;
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
      if (started) await app.stop().catch((error) => logger.warn(`stopping the receiver: ${String(error)}`));
    },
  };
}

/**
 * Requests handed on whose work has not finished: queued, running, or waiting on Mintlify, Slack
 * or Redis. With the work thread's throughput in BENCHMARKS.md that is a second or two of work
 * when the CPU is what limits it; when a service is slow, it bounds how much the bot holds at
 * once. Events are always taken (Slack itself caps them at 30,000 an hour per workspace, and a
 * refused one could not be told to anybody).
 */
const BUSY_BACKLOG = 1_000;

/**
 * The answer inside the ack, and whether the request is refused rather than forwarded. Only the
 * slash command and the form have an answer (an ephemeral message, form errors); every other
 * request is acknowledged empty. While the work is too far behind, a command or form that would
 * start work is refused with a plain "try again in a minute": the person knows, nothing is queued.
 */
function acknowledgement(
  config: Config,
  body: Record<string, unknown>,
  busy: () => boolean,
): { reply: RespondArguments | ViewResponseAction | undefined; refused: boolean } {
  if (body.command === '/docs-agent') {
    const { reply, work } = acknowledgeCommand(config.access, body as unknown as SlashCommand);
    if (work && busy()) return { reply: { response_type: 'ephemeral', text: TOO_BUSY }, refused: true };
    return { reply, refused: false };
  }
  const view = body.view as ViewOutput | undefined;
  const user = (body.user as { id?: unknown } | undefined)?.id;
  if (
    body.type === 'view_submission' &&
    view?.callback_id === SEND_TO_AGENT_FORM &&
    typeof user === 'string'
  ) {
    const { reply, submission } = acknowledgeForm(config.access, view, user);
    if (submission && busy()) {
      return {
        reply: { response_action: 'errors', errors: { [INSTRUCTION_BLOCK]: TOO_BUSY } },
        refused: true,
      };
    }
    return { reply, refused: false };
  }
  return { reply: undefined, refused: false };
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

function isServer(value: unknown): value is Server {
  return typeof value === 'object' && value !== null && 'address' in value;
}
