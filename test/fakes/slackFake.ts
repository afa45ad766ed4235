/**
 * A loopback fake of the Slack Web API and of response URLs. Point the bot's WebClient at it with
 * `clientOptions: { slackApiUrl: fake.apiUrl }`; it answers like Slack (HTTP 200, `{ ok, error }`),
 * enforces Block Kit limits and bot scopes, and records every call for assertions.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { type Answer, contentProblem, fail, type SlackMethod } from './slack/answers.js';
import { parseApiRequest, parseJsonObject, readBody } from './slack/apiRequest.js';
import { CallLog, type CallPredicate, type SlackCall } from './slack/callLog.js';
import { testWorkspace } from './slack/ids.js';
import { messageMethods } from './slack/messageMethods.js';
import { SocketModeServer } from './slack/socketMode.js';
import { type SeededMessage, type SlackUser, type StoredMessage, Workspace } from './slack/workspace.js';
import { workspaceMethods } from './slack/workspaceMethods.js';

export type { CallPredicate, SlackCall } from './slack/callLog.js';
export type { SeededMessage, SlackUser, StoredMessage } from './slack/workspace.js';

export interface SlackFakeOptions {
  botToken: string;
  botUserId?: string;
  botId?: string;
  teamId?: string;
  teamName?: string;
  teamDomain?: string;
  appId?: string;
  /** The bot scopes the token was granted; by default the bot scopes listed in manifest.yml. */
  scopes?: string[];
  /** An app-level token (xapp-...): enables Socket Mode (`apps.connections.open` and a WebSocket). */
  appToken?: string;
  /** Added before every Web API answer, as the real API's round trip, for benchmarks. */
  latencyMs?: number;
  /** `conversations.replies` repeats a thread's parent at the top of every page (see Workspace). */
  threadParentOnEveryPage?: boolean;
}

/**
 * What the next call to a method meets instead of (or on top of) its normal answer:
 * `{ error }` answers `{ ok: false, error }`; `{ status: 429, retryAfter }` rate-limits;
 * `{ status: 500 }` fails at the HTTP level; `{ delayMs }` and `{ until }` answer normally but late.
 */
export interface SlackFault {
  error?: string;
  status?: number;
  /** Seconds, sent as Retry-After with a 429. WebClient waits exactly this long; 0 retries at once. */
  retryAfter?: number;
  /** The call is recorded on arrival (so waitForCall resolves) and answered this much later. */
  delayMs?: number;
  /** The call is recorded on arrival and answered once this settles (a step the test holds). */
  until?: Promise<unknown>;
  /** Met only by a call about this channel (others pass it by): for a test that shares the bot. */
  channel?: string;
  /**
   * With `status`: the call is carried out (a post lands in the channel) and then answered with that
   * status, as when Slack's edge fails after the write: the caller never hears that it landed.
   */
  landed?: boolean;
}

export interface SlackFake {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `http://127.0.0.1:<port>/api/`, for WebClient's `slackApiUrl`. */
  apiUrl: string;
  calls: SlackCall[];
  callsTo(method: string): SlackCall[];
  waitForCall(method: string, predicate?: CallPredicate, timeoutMs?: number): Promise<SlackCall>;
  /** Calls `listener` with each call from now on, as it arrives; returns a function that stops it. */
  onCall(listener: (call: SlackCall) => void): () => void;
  waitForCalls(
    method: string,
    count: number,
    predicate?: CallPredicate,
    timeoutMs?: number,
  ): Promise<SlackCall[]>;
  /** Makes the next `times` calls to `method` (or "response_url") meet `fault`; faults queue up in order. */
  failNext(method: string, fault: SlackFault, times?: number): void;
  /**
   * The bot leaves (false) or joins (true) a channel: outside it, Slack refuses the bot's posts,
   * reads and reactions there with not_in_channel. It is a member of every channel until it leaves.
   */
  setBotMember(channel: string, member: boolean): void;
  /** An admin locks (or unlocks) the thread rooted at `ts`: Slack then refuses replies in it. */
  lockThread(channel: string, ts: string, locked?: boolean): void;
  /**
   * The bot's token revoked (the app uninstalled and installed again, which issues a new one), or
   * given back: while revoked, every Web API call with it answers `token_revoked` (or the error
   * given: `account_inactive` for an app uninstalled, or its workspace deactivated).
   */
  revokeToken(revoked?: boolean | 'account_inactive' | 'invalid_auth'): void;
  /** Puts a message a person wrote into a channel's history (a thread reply when thread_ts is set). */
  seedMessage(channel: string, message: SeededMessage): StoredMessage;
  seedUser(user: SlackUser): void;
  /** A person deletes a message: Slack no longer has it (a thread's parent with replies stays as a tombstone). */
  deleteMessage(channel: string, ts: string): boolean;
  /** The bot's DM with `user`, where posts to the user id land: for seeding what they send the bot. */
  dmWith(user: string): string;
  /** A copy of a channel's history in ts order, thread replies included. */
  history(channel: string): StoredMessage[];
  message(channel: string, ts: string): StoredMessage | undefined;
  /** Ephemeral messages Slack accepted but would show to nobody: posted under a message with no thread. */
  unseenEphemerals(): string[];
  /** A response URL on this fake for slash-command and interaction payloads. */
  responseUrl(id?: string): string;
  /** Socket Mode's side of the WebSocket; defined when the fake was given an appToken. */
  socketMode: SocketModeServer | undefined;
  close(): Promise<void>;
}

interface Decision {
  status: number;
  response: Answer;
  headers: Record<string, string>;
  fault?: SlackFault;
}

const methods: Record<string, SlackMethod> = { ...messageMethods, ...workspaceMethods };

// Slack lets a response URL be used five times (within 30 minutes).
const responseUrlUses = 5;

export async function startSlackFake(options: SlackFakeOptions): Promise<SlackFake> {
  const {
    botToken,
    appToken,
    latencyMs = 0,
    scopes = manifestBotScopes(),
    threadParentOnEveryPage = false,
    ...identity
  } = options;
  const workspace = new Workspace({ ...testWorkspace, ...definedOnly(identity) });
  workspace.threadParentOnEveryPage = threadParentOnEveryPage;
  const log = new CallLog();
  const faults = new Map<string, SlackFault[]>();
  const uses = new Map<string, number>();
  let responseUrlCount = 0;
  let tokenRevoked: false | string = false;

  const takeFault = (method: string, args: Record<string, unknown> = {}) => {
    const queue = faults.get(method);
    const at =
      queue?.findIndex((fault) => fault.channel === undefined || fault.channel === args.channel) ?? -1;
    return at < 0 ? undefined : queue?.splice(at, 1)[0];
  };

  async function answerWebApi(
    method: string,
    request: IncomingMessage,
    query: URLSearchParams,
    body: string,
  ) {
    const { args, token } = parseApiRequest(request.headers, query, body);
    const { status, response, headers, fault } = decide(method, args, token);
    log.record({
      method,
      args,
      token,
      at: Date.now(),
      status,
      response,
      ...(fault ? { injected: true } : {}),
    });
    if (fault?.until) await fault.until;
    if (fault?.delayMs || latencyMs) await sleep((fault?.delayMs ?? 0) + latencyMs);
    return { status, response, headers };
  }

  function decide(method: string, args: Record<string, unknown>, token: string | undefined): Decision {
    if (!token) return { status: 200, response: fail('not_authed'), headers: {} };
    if (method === 'apps.connections.open') {
      // Slack's own trouble (a 5xx while it is down) meets any method, this one too.
      const down = takeFault(method, args);
      if ((down?.status && down.status !== 200) || down?.error) {
        return {
          status: down.status ?? 200,
          response: fail(down.error ?? 'fatal_error'),
          headers: {},
          fault: down,
        };
      }
      // Only an app-level token opens a Socket Mode connection.
      const ok = socketMode !== undefined && token === appToken;
      return {
        status: 200,
        response: ok
          ? { ok: true, url: socketMode.connectionUrl() }
          : fail(appToken ? 'invalid_auth' : 'not_allowed_token_type'),
        headers: {},
      };
    }
    if (token !== botToken) return { status: 200, response: fail('invalid_auth'), headers: {} };
    if (tokenRevoked) return { status: 200, response: fail(tokenRevoked), headers: {} };
    const handler = methods[method];
    const needed = handler?.scopes?.(args) ?? [];
    const headers: Record<string, string> = {
      'x-oauth-scopes': scopes.join(','),
      'x-accepted-oauth-scopes': needed.join(','),
    };
    const fault = takeFault(method, args);
    const faulty = (status: number, error: string, extra = {}) => ({
      status,
      response: fail(error, extra),
      headers,
      fault,
    });
    if (fault?.status === 429) {
      headers['retry-after'] = String(fault.retryAfter ?? 1);
      return faulty(429, 'ratelimited');
    }
    if (fault?.landed && handler) handler.answer(args, workspace);
    if (fault?.status && fault.status !== 200) return faulty(fault.status, fault.error ?? 'fatal_error');
    if (fault?.error) return faulty(200, fault.error);
    if (!handler) return faulty(200, 'unknown_method', { req_method: method });
    const response =
      needed.length > 0 && !needed.some((scope) => scopes.includes(scope))
        ? fail('missing_scope', { needed: needed.join(','), provided: scopes.join(',') })
        : handler.answer(args, workspace);
    return { status: 200, response, headers, fault };
  }

  async function answerResponseUrl(id: string, body: string) {
    const args = parseJsonObject(body);
    const { status, response, fault } = decideResponseUrl(id, args);
    log.record({
      method: 'response_url',
      responseId: id,
      args,
      at: Date.now(),
      status,
      response,
      ...(fault ? { injected: true } : {}),
    });
    if (fault?.until) await fault.until;
    if (fault?.delayMs) await sleep(fault.delayMs);
    return { status, response, headers: {} };
  }

  // Response URLs answer with HTTP statuses (Bolt's respond() only checks response.ok), unlike the Web API.
  function decideResponseUrl(id: string, args: Record<string, unknown>): Decision {
    const fault = takeFault('response_url');
    const used = (uses.get(id) ?? 0) + 1;
    uses.set(id, used);
    const answer = (status: number, response: Answer) => ({ status, response, headers: {}, fault });
    if (fault?.error || (fault?.status && fault.status !== 200)) {
      return answer(fault.status ?? 404, fail(fault.error ?? 'fatal_error'));
    }
    if (used > responseUrlUses) return answer(404, fail('used_url'));
    const problem = args.delete_original === true ? undefined : contentProblem(args);
    return problem ? answer(400, problem) : answer(200, { ok: true });
  }

  async function route(request: IncomingMessage) {
    const url = new URL(request.url ?? '/', 'http://fake');
    const body = await readBody(request);
    if (url.pathname.startsWith('/api/')) {
      return answerWebApi(decodeURIComponent(url.pathname.slice(5)), request, url.searchParams, body);
    }
    if (url.pathname.startsWith('/response/')) {
      return answerResponseUrl(decodeURIComponent(url.pathname.slice(10)), body);
    }
    return { status: 404, response: fail('not_found'), headers: {} };
  }

  const server = createServer((request: IncomingMessage, reply: ServerResponse) => {
    route(request).then(
      ({ status, response, headers }) => {
        reply.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        reply.end(JSON.stringify(response));
      },
      (error: unknown) => {
        reply.writeHead(500, { 'content-type': 'text/plain' });
        reply.end(`Slack fake failed: ${String(error)}`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const socketMode = appToken ? new SocketModeServer(url.replace('http:', 'ws:')) : undefined;
  if (socketMode)
    server.on('upgrade', (request, socket, head) => socketMode.handleUpgrade(request, socket, head));

  return {
    url,
    apiUrl: `${url}/api/`,
    calls: log.calls,
    callsTo: (method) => log.callsTo(method),
    waitForCall: (method, predicate, timeoutMs) => log.waitForCall(method, predicate, timeoutMs),
    onCall: (listener) => log.onCall(listener),
    waitForCalls: (method, count, predicate, timeoutMs) =>
      log.waitForCalls(method, count, predicate, timeoutMs),
    failNext(method, fault, times = 1) {
      const queue = faults.get(method) ?? [];
      for (let i = 0; i < times; i += 1) queue.push(fault);
      faults.set(method, queue);
    },
    seedMessage: (channel, message) => structuredClone(workspace.seedMessage(channel, message)),
    seedUser: (user) => workspace.seedUser(user),
    deleteMessage: (channel, ts) => workspace.remove(channel, ts),
    setBotMember: (channel, member) => workspace.setMember(channel, member),
    lockThread: (channel, ts, locked = true) => workspace.setLocked(channel, ts, locked),
    revokeToken: (revoked = true) => void (tokenRevoked = revoked === true ? 'token_revoked' : revoked),
    dmWith: (user) => workspace.openDm(user).id,
    history: (channel) => structuredClone(workspace.history(channel)),
    message: (channel, ts) => structuredClone(workspace.find(channel, ts)),
    unseenEphemerals: () => [...workspace.unseen],
    responseUrl(id) {
      responseUrlCount += 1;
      return `${url}/response/${encodeURIComponent(id ?? `response-${responseUrlCount}`)}`;
    },
    socketMode,
    close: () =>
      new Promise<void>((resolve, reject) => {
        socketMode?.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The bot scopes the app asks for in manifest.yml, so the fake refuses what a real install would. */
function manifestBotScopes(): string[] {
  const manifest = parseYaml(readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8')) as {
    oauth_config?: { scopes?: { bot?: string[] } };
  };
  return manifest.oauth_config?.scopes?.bot ?? [];
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
