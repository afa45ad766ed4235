/**
 * A loopback stand-in for Mintlify's agent-job (admin v2), preview deployment, and analytics v1
 * (visitors, feedback, feedback by page, searches, assistant conversations) endpoints.
 * It answers only what the published specs and docs allow (test/contracts/), records every
 * request for assertions, and lets a test drive job states and inject faults.
 *
 * Every answer it gives, injected faults aside, is checked against the spec before it goes out
 * (test/contracts/fakeAnswers.ts): an answer the spec does not allow is recorded in `violations` and
 * replaced by a 500, and `close()` throws with each violation (operation, status, schema error), so
 * the test that provoked it fails. Data a test sets (`setJob`, `setVisitors` and the other setters)
 * is checked the same way when it is set, and refused with a throw. A test that serves what the spec
 * does not allow (a field Mintlify may add) injects it with `injectFault`, which is not checked.
 *
 * Choices the docs leave open, made here on purpose:
 * - A follow-up reopens the job: status -> active, archivedAt -> null, and prLink -> null, as the
 *   spec has it for every active job ("null while the job is still active"); the branch stays. A test
 *   ends the round with `setJob`, with or without a pull request. The docs promise no state for that answer
 *   (the agent takes the message up in the background): after `takeUpFollowUpsLater()`, a
 *   follow-up's answer and later reads show the job as it was, until a test moves it with `setJob`.
 * - A project other than `projectId` answers 403 (the key has no access to it).
 * - Visitors requests without dateFrom/dateTo answer 400: the service's default range is
 *   undocumented, so the bot must always send both.
 * - Visitors rows are served in insertion order, unsorted; the date range filters nothing, except
 *   that rows set for one `dateFrom` with `setVisitorsOf` answer the requests starting that day.
 * - The same holds for feedback, searches and conversations: every analytics request without
 *   dateFrom/dateTo answers 400, and the range filters nothing (a test sets the rows it means).
 * - `limit` must be an integer in the spec's range (the spec types it `number`); anything else
 *   answers 400 rather than being rounded or clamped.
 * - Cursors are opaque and tied to their endpoint: feedback and searches give base64url of
 *   `<operation>:<offset>`, assistant gives a ULID-shaped string (the spec says `format: ulid`)
 *   holding the offset. A cursor the endpoint did not give answers 400. The last page has
 *   `nextCursor: null` (and `hasMore: false`).
 * - Feedback entries are served in insertion order; `source` and `status` (comma-separated)
 *   filter them, an unknown `source` answers 400. Feedback by page counts the same entries per
 *   path: thumbsUp/thumbsDown are contextual entries with `helpful` true/false (as the spec
 *   describes them; a thumbs_only vote counts in `total` only),
 *   `code` the code_snippet entries, `total` all of them; paths in the order they were first
 *   seen (the docs give no order). It has no cursor: `cursor` or `offset` there answers 400, so a client
 *   that tries to walk it fails loudly instead of reading the first page forever.
 * - Searches are served by hits descending (ties in insertion order); `totalSearches` defaults
 *   to the sum of all hits. Conversations are served in insertion order.
 * - A `destroySocket` fault lets the request take effect (a job is created) before the socket is
 *   cut, as when an answer is lost on the way back.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { AgentJob, DeploymentState, VisitorsPage, VisitorsRow } from '../../src/mintlify/index.js';
import { checkFakeAnswer } from '../contracts/fakeAnswers.js';
import {
  type Answer,
  type FakeOperation,
  json,
  type RecordedRequest,
  readRequest,
  send,
} from './mintlifyFakeHttp.js';

export type { Answer, FakeOperation, RecordedRequest } from './mintlifyFakeHttp.js';

export type Fault =
  /**
   * Answer this status with `{error}`, or `body` as JSON, or `rawBody` as is; e.g. 401, 403, 429, 503;
   * once `until` settles, when given (a refusal the test holds).
   */
  | {
      status: number;
      retryAfter?: string;
      /** e.g. a redirect's `location`. */
      headers?: Record<string, string>;
      body?: unknown;
      rawBody?: string;
      until?: Promise<unknown>;
    }
  /** Answer normally, but wait first: before the headers (default) or in the middle of the body. */
  | { delayMs: number; phase?: 'headers' | 'body' }
  /** Answer normally once `until` settles (a step the test holds); the request is acted on then. */
  | { until: Promise<unknown> }
  /** Answer normally, with the JSON cut short. */
  | { malformedJson: true }
  /** Answer normally, with a body that breaks the spec (`status: 42`, `hasMore: 'yes'`). */
  | { schemaBreaking: true }
  /** Act on the request, then cut the connection instead of answering. */
  | { destroySocket: true };

type RateLimit = 'agent' | 'analytics' | 'previews';
const HOUR_MS = 3_600_000;
const RATE_LIMITS: Record<RateLimit, { max: number; windowMs: number; error: string }> = {
  agent: { max: 100, windowMs: HOUR_MS, error: 'Rate limit exceeded: 100 agent uses per project per hour' },
  analytics: {
    max: 100,
    windowMs: HOUR_MS,
    error: 'Rate limit exceeded: 100 analytics requests per organization per hour',
  },
  previews: { max: 5, windowMs: 60_000, error: 'Rate limit exceeded: 5 preview deployments per minute' },
};
const RATE_LIMIT_OF: Partial<Record<FakeOperation, RateLimit>> = {
  createJob: 'agent',
  sendMessage: 'agent',
  visitors: 'analytics',
  feedback: 'analytics',
  feedbackByPage: 'analytics',
  searches: 'analytics',
  assistant: 'analytics',
  deployPreview: 'previews',
};

export type FaultMatch = FakeOperation | ((request: RecordedRequest) => boolean);

export interface MintlifyFakeOptions {
  apiKey: string;
  projectId: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Added before every answer, for benchmarks. */
  latencyMs?: number;
  /** When set, a preview deployment is in progress at once and succeeds after this long (the sandbox). */
  previewDeployMs?: number;
  repository?: string;
  model?: string;
  /**
   * The service's documented limits: 100 agent uses (creates and follow-ups) per project an hour,
   * 100 analytics requests per organization an hour, 5 preview deployments a minute; beyond them,
   * 429 `{error}` (no Retry-After is documented). On by default; the benchmarks turn them off.
   * Creates and follow-ups share one count per project id (assumed: the docs do not say), and only
   * those carried out count: not one refused for its prompt, its key, its project or an unknown job.
   */
  rateLimits?: boolean;
  /** The clock the limits' windows and deployments' times count by (ms since the epoch); tests move it. */
  now?: () => number;
}

export type VisitorsTotals = VisitorsPage['totals'];

export type FakeFeedbackSource = 'code_snippet' | 'contextual' | 'agent' | 'thumbs_only';
export type FakeFeedbackStatus = 'pending' | 'in_progress' | 'resolved' | 'dismissed';

/**
 * A feedback entry as a test sets it. It is served in the spec's variant for its source: a
 * contextual entry with `helpful` and `contact`, a code_snippet entry with `code`, `filename` and
 * `lang`, an agent or thumbs_only entry with the base fields only (what a test gives beyond them
 * is left out, and a variant's field it leaves out is served empty). `source` and `status` take
 * the spec's values (FakeFeedbackSource, FakeFeedbackStatus); they are typed as strings so a plain
 * object literal fits, and the contract test checks what is served.
 */
export interface FakeFeedbackEntry {
  id: string;
  path: string;
  comment: string | null;
  createdAt: string | null;
  source: string;
  status: string;
  /** Contextual entries: whether the reader found the page helpful (a thumbs up or down). */
  helpful?: boolean;
  contact?: string | null;
  /** Code snippet entries. */
  code?: string;
  filename?: string | null;
  lang?: string | null;
}

/** The entry in the spec's variant for its source. */
function servedFeedback(entry: FakeFeedbackEntry): Record<string, unknown> {
  const { id, path, comment, createdAt, source, status } = entry;
  const base = { id, path, comment, createdAt, source, status };
  if (source === 'contextual')
    return { ...base, helpful: entry.helpful ?? false, contact: entry.contact ?? null };
  if (source === 'code_snippet') {
    return { ...base, code: entry.code ?? '', filename: entry.filename ?? null, lang: entry.lang ?? null };
  }
  return base;
}

/** A row of `SearchesResponse`. */
export interface FakeSearchRow {
  searchQuery: string;
  hits: number;
  ctr: number;
  topClickedPage: string | null;
  lastSearchedAt: string;
}

/** A row of `AssistantConversationsResponse`. */
export interface FakeConversation {
  id: string;
  timestamp: string;
  query: string;
  response: string;
  responseType?: 'answer' | 'clarifying_question';
  sources: Array<{ title: string; url: string }>;
  resolutionStatus: 'answered' | 'unanswered';
  queryCategory: string | null;
  pageUrl: string | null;
}

/** A preview deployment as the fake keeps it. */
export interface FakeDeployment {
  statusId: string;
  branch: string;
  previewUrl: string;
  status: DeploymentState;
  summary?: string;
  /** When it was asked for, and when it ended (success or failure), as the status answer gives them. */
  createdAt: string;
  endedAt?: string;
}

export interface MintlifyFake {
  url: string;
  port: number;
  requests: RecordedRequest[];
  jobs: Map<string, AgentJob>;
  /** Preview deployments by status id, in the order they were asked for. */
  deployments: Map<string, FakeDeployment>;
  /**
   * Ends (or moves) a deployment: `success`, `failure` (with a summary), `in_progress`. Ending it
   * stamps `endedAt` (once); moving it back to `queued` or `in_progress` clears it.
   */
  setDeployment(statusId: string, patch: Partial<Pick<FakeDeployment, 'status' | 'summary'>>): void;
  /** false: the plan has no previews, and asking for one answers 403. */
  setPreviewsAvailable(available: boolean): void;
  /** false: a deployment is answered without its `previewUrl` (the spec does not require one). */
  setPreviewUrlsGiven(given: boolean): void;
  /**
   * false: a job created from now on names no branch yet (`source.ref` null, as the spec allows:
   * the agent may pick one once under way) until a test names it with `setJob`.
   */
  setBranchesNamedAtOnce(named: boolean): void;
  /**
   * false: a deployment's status is read without its `status` (the spec marks no field required),
   * until set back to true; the deployment itself moves on as `setDeployment` says.
   */
  setDeploymentStatesGiven(given: boolean): void;
  /** Merges `patch` into the job (creating it if unknown); archiving sets archivedAt unless given. */
  setJob(id: string, patch: Partial<AgentJob>): AgentJob;
  /** From now on a follow-up leaves the job as it is: the agent has not taken it up yet. */
  takeUpFollowUpsLater(): void;
  addVisitors(rows: VisitorsRow[]): void;
  /** Replaces the rows; totals default to the column sums. */
  setVisitors(rows: VisitorsRow[], totals?: VisitorsTotals): void;
  /** The rows (and totals) for requests whose dateFrom is this day (YYYY-MM-DD), e.g. last week's. */
  setVisitorsOf(dateFrom: string, rows: VisitorsRow[], totals?: VisitorsTotals): void;
  /** Replaces the feedback entries, served by `/feedback` and counted by `/feedback/by-page`. */
  setFeedback(entries: FakeFeedbackEntry[]): void;
  /** Replaces the search terms; `totalSearches` defaults to the sum of their hits. */
  setSearches(rows: FakeSearchRow[], totalSearches?: number): void;
  /** Replaces the assistant conversations, served by `/assistant` in this order. */
  setConversations(rows: FakeConversation[]): void;
  /**
   * Calls `listener` after the fake has acted on each request, with the answer it gives normally
   * (an injected fault may still change what goes on the wire); returns a function that stops it.
   */
  onAnswer(listener: (request: RecordedRequest, answer: Answer) => void): () => void;
  /** The next `times` requests that match get `fault` instead of (or on top of) the normal answer. */
  injectFault(match: FaultMatch, fault: Fault, times?: number): void;
  clearFaults(): void;
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  requestsFor(operation: FakeOperation): RecordedRequest[];
  /**
   * Answers the fake gave that its spec does not allow, injected faults aside (each was replaced by a
   * 500): `<operation> <METHOD path> answered <status>, which breaks <schema>: <errors>`.
   */
  readonly violations: readonly string[];
  /** Returns the violations so far and forgets them (a test that provokes one on purpose). */
  takeViolations(): string[];
  /** Forgets requests, jobs, deployments, analytics rows (visitors, feedback, searches, conversations) and faults. */
  reset(): void;
  /** Stops the fake; then throws if it gave any answer its spec does not allow (see `violations`). */
  close(): Promise<void>;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  401: 'Invalid or expired API key',
  403: 'Forbidden',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
};

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const FEEDBACK_SOURCES: readonly string[] = ['code_snippet', 'contextual', 'agent', 'thumbs_only'];

/** Page sizes of the analytics endpoints: the spec's maximum and default `limit`. */
const LIMITS = {
  visitors: { max: 250, default: 50 },
  feedback: { max: 100, default: 50 },
  feedbackByPage: { max: 100, default: 10 },
  searches: { max: 100, default: 50 },
  assistant: { max: 1000, default: 100 },
} as const;

/** 400 with the analytics error body, one detail per problem. */
const invalidQuery = (details: string[]): Answer =>
  json(400, { error: 'Invalid query parameters', details: details.map((message) => ({ message })) });

/** What is wrong with the date range and `limit` of an analytics request; empty when nothing. */
function rangeAndLimitProblems(query: Record<string, string>, maxLimit: number): string[] {
  const details: string[] = [];
  for (const name of ['dateFrom', 'dateTo'] as const) {
    const value = query[name];
    if (value === undefined)
      details.push(`${name} is required by this fake (the default range is undocumented)`);
    else if (!DATE_PATTERN.test(value) || Number.isNaN(Date.parse(value)))
      details.push(`${name} must be an ISO 8601 date-time or YYYY-MM-DD`);
  }
  const limit = Number(query.limit ?? '1');
  if (!/^\d+$/.test(query.limit ?? '1') || limit < 1 || limit > maxLimit)
    details.push(`limit must be an integer from 1 to ${maxLimit}`);
  return details;
}

const limitOf = (query: Record<string, string>, fallback: number): number =>
  query.limit === undefined ? fallback : Number(query.limit);

/** base64url of `<operation>:<offset>`: opaque to the client, and useless on another endpoint. */
const offsetCursor = {
  encode: (operation: string, offset: number): string =>
    Buffer.from(`${operation}:${offset}`).toString('base64url'),
  decode: (operation: string, cursor: string): number | undefined => {
    const match = /^([a-zA-Z]+):(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!match || match[1] !== operation || offsetCursor.encode(operation, Number(match[2])) !== cursor)
      return undefined;
    return Number(match[2]);
  },
};

// Crockford's base32, as ULIDs are written: 26 characters, the first at most 7.
const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The offset written as a ULID-shaped string, as the spec gives the assistant cursor `format: ulid`. */
const ulidCursor = {
  encode: (offset: number): string => {
    let text = '';
    for (let rest = offset; rest > 0; rest = Math.floor(rest / 32))
      text = ULID_ALPHABET.charAt(rest % 32) + text;
    return text.padStart(26, '0');
  },
  decode: (cursor: string): number | undefined => {
    if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(cursor)) return undefined;
    let offset = 0;
    for (const char of cursor) offset = offset * 32 + ULID_ALPHABET.indexOf(char);
    return Number.isSafeInteger(offset) ? offset : undefined;
  },
};

/** The page of `rows` at `offset`, and the cursor of the next one (null on the last page). */
function cursorPage<Row>(
  rows: readonly Row[],
  offset: number,
  limit: number,
  encode: (offset: number) => string,
): { page: Row[]; nextCursor: string | null; hasMore: boolean } {
  const hasMore = offset + limit < rows.length;
  return {
    page: rows.slice(offset, offset + limit),
    nextCursor: hasMore ? encode(offset + limit) : null,
    hasMore,
  };
}

/** Throws unless `body` is a 200 answer the spec allows for `operation`: what a test sets is served as is. */
function refuseUnlessServable(what: string, operation: FakeOperation, body: unknown): void {
  const check = checkFakeAnswer(operation, 200, body);
  if (!check.ok) {
    throw new Error(
      `${what}: the spec does not allow this data (${check.schema}): ${check.errors.join('; ')}`,
    );
  }
}

const NO_TOTALS: VisitorsTotals = { human: 0, ai: 0, total: 0 };
const sumOfHits = (rows: readonly FakeSearchRow[]): number =>
  rows.reduce((total, row) => total + row.hits, 0);

export async function startMintlifyFake(options: MintlifyFakeOptions): Promise<MintlifyFake> {
  const requests: RecordedRequest[] = [];
  const jobs = new Map<string, AgentJob>();
  let visitors: VisitorsRow[] = [];
  let fixedTotals: VisitorsTotals | undefined;
  const visitorsByDateFrom = new Map<string, { rows: VisitorsRow[]; totals: VisitorsTotals | undefined }>();
  let feedback: FakeFeedbackEntry[] = [];
  let searches: FakeSearchRow[] = [];
  let fixedTotalSearches: number | undefined;
  let conversations: FakeConversation[] = [];
  const answerListeners = new Set<(request: RecordedRequest, answer: Answer) => void>();
  let violations: string[] = [];
  let faults: Array<{ match: FaultMatch; fault: Fault; remaining: number }> = [];
  let jobCounter = 0;
  const deployments = new Map<string, FakeDeployment>();
  let previewsAvailable = true;
  let previewUrlsGiven = true;
  let branchesNamedAtOnce = true;
  let deploymentStatesGiven = true;
  const deployTimers = new Set<NodeJS.Timeout>();
  const shutdown = new AbortController();
  const clock = options.now ?? Date.now;
  const stamp = (): string => new Date(clock()).toISOString();
  // Every answer waiting out `latencyMs` listens on it: under load, many more than Node's default 10.
  setMaxListeners(0, shutdown.signal);

  const newJob = (id: string): AgentJob => ({
    id,
    status: 'active',
    source: {
      repository: options.repository ?? 'https://github.com/acme/docs',
      ref: branchesNamedAtOnce ? `mintlify/${id}` : null,
    },
    model: options.model ?? 'sonnet',
    prLink: null,
    createdAt: stamp(),
    archivedAt: null,
  });

  let followUpsLater = false;
  const setJob = (id: string, patch: Partial<AgentJob>): AgentJob => {
    const current = jobs.get(id) ?? newJob(id);
    const next: AgentJob = { ...current, ...patch, source: { ...current.source, ...patch.source } };
    if (patch.status === 'archived' && !('archivedAt' in patch)) next.archivedAt = stamp();
    if (next.status === 'active' && next.prLink !== null) {
      throw new Error(`setJob(${id}): the spec has prLink null while a job is active`);
    }
    refuseUnlessServable(`setJob(${id})`, 'getJob', next);
    jobs.set(id, next);
    return next;
  };

  const promptProblem = (body: unknown): Answer | undefined => {
    const prompt = (body as { prompt?: unknown } | undefined)?.prompt;
    if (typeof prompt === 'string' && prompt.length >= 1) return undefined;
    return json(400, { error: 'Invalid request: prompt must be a string of at least 1 character' });
  };

  const visitorsAnswer = (query: Record<string, string>): Answer => {
    const details = rangeAndLimitProblems(query, LIMITS.visitors.max);
    const limit = limitOf(query, LIMITS.visitors.default);
    const offset = query.offset === undefined ? 0 : Number(query.offset);
    if (!/^\d+$/.test(query.offset ?? '0')) details.push('offset must be an integer >= 0');
    if (details.length > 0) return invalidQuery(details);
    const ofDay = visitorsByDateFrom.get((query.dateFrom ?? '').slice(0, 10));
    const rows = ofDay?.rows ?? visitors;
    const sum = (key: 'human' | 'ai' | 'total') => rows.reduce((total, row) => total + row[key], 0);
    const totals = (ofDay ? ofDay.totals : fixedTotals) ?? {
      human: sum('human'),
      ai: sum('ai'),
      total: sum('total'),
    };
    const page = rows.slice(offset, offset + limit);
    return json(200, { totals, visitors: page, hasMore: offset + limit < rows.length });
  };

  /** The stored feedback that passes the `source` and `status` filters, or the problem with them. */
  const filteredFeedback = (query: Record<string, string>, details: string[]): FakeFeedbackEntry[] => {
    const { source, status } = query;
    if (source !== undefined && !FEEDBACK_SOURCES.includes(source))
      details.push(`source must be one of ${FEEDBACK_SOURCES.join(', ')}`);
    const statuses = status?.split(',').map((value) => value.trim());
    return feedback.filter(
      (entry) =>
        (source === undefined || entry.source === source) &&
        (statuses === undefined || statuses.includes(entry.status)),
    );
  };

  const feedbackAnswer = (query: Record<string, string>): Answer => {
    const details = rangeAndLimitProblems(query, LIMITS.feedback.max);
    const rows = filteredFeedback(query, details);
    const offset = query.cursor === undefined ? 0 : offsetCursor.decode('feedback', query.cursor);
    if (offset === undefined) details.push('cursor is not one this endpoint gave');
    if (details.length > 0 || offset === undefined) return invalidQuery(details);
    const limit = limitOf(query, LIMITS.feedback.default);
    const { page, nextCursor, hasMore } = cursorPage(rows, offset, limit, (next) =>
      offsetCursor.encode('feedback', next),
    );
    return json(200, { feedback: page.map(servedFeedback), nextCursor, hasMore });
  };

  const feedbackByPageAnswer = (query: Record<string, string>): Answer => {
    const details = rangeAndLimitProblems(query, LIMITS.feedbackByPage.max);
    const rows = filteredFeedback(query, details);
    for (const name of ['cursor', 'offset'])
      if (query[name] !== undefined) details.push(`${name} is not a parameter of feedback by page`);
    if (details.length > 0) return invalidQuery(details);
    const byPath = new Map<
      string,
      { path: string; thumbsUp: number; thumbsDown: number; code: number; total: number }
    >();
    for (const entry of rows) {
      const counts = byPath.get(entry.path) ?? {
        path: entry.path,
        thumbsUp: 0,
        thumbsDown: 0,
        code: 0,
        total: 0,
      };
      if (entry.source === 'contextual' && entry.helpful === true) counts.thumbsUp += 1;
      if (entry.source === 'contextual' && entry.helpful !== true) counts.thumbsDown += 1;
      if (entry.source === 'code_snippet') counts.code += 1;
      counts.total += 1;
      byPath.set(entry.path, counts);
    }
    // The docs give no order: paths come in the order they were first seen, so the bot must rank them.
    const groups = [...byPath.values()];
    const limit = limitOf(query, LIMITS.feedbackByPage.default);
    return json(200, { feedback: groups.slice(0, limit), hasMore: groups.length > limit });
  };

  const searchesAnswer = (query: Record<string, string>): Answer => {
    const details = rangeAndLimitProblems(query, LIMITS.searches.max);
    const offset = query.cursor === undefined ? 0 : offsetCursor.decode('searches', query.cursor);
    if (offset === undefined) details.push('cursor is not one this endpoint gave');
    if (details.length > 0 || offset === undefined) return invalidQuery(details);
    const rows = [...searches].sort((a, b) => b.hits - a.hits);
    const totalSearches = fixedTotalSearches ?? sumOfHits(rows);
    const limit = limitOf(query, LIMITS.searches.default);
    const { page, nextCursor } = cursorPage(rows, offset, limit, (next) =>
      offsetCursor.encode('searches', next),
    );
    return json(200, { searches: page, totalSearches, nextCursor });
  };

  const assistantAnswer = (query: Record<string, string>): Answer => {
    const details = rangeAndLimitProblems(query, LIMITS.assistant.max);
    const offset = query.cursor === undefined ? 0 : ulidCursor.decode(query.cursor);
    if (offset === undefined) details.push('cursor must be a ULID this endpoint gave');
    if (details.length > 0 || offset === undefined) return invalidQuery(details);
    const limit = limitOf(query, LIMITS.assistant.default);
    const { page, nextCursor, hasMore } = cursorPage(conversations, offset, limit, ulidCursor.encode);
    return json(200, { conversations: page, nextCursor, hasMore });
  };

  const previewAnswer = (projectId: string, body: unknown): Answer => {
    if (projectId !== options.projectId) return json(403, { error: 'API key has no access to this project' });
    if (!previewsAvailable) {
      return json(403, { error: 'Preview deployments are not available on your current plan' });
    }
    const branch = (body as { branch?: unknown } | undefined)?.branch;
    if (typeof branch !== 'string' || branch.length < 1) {
      return json(400, { error: 'Invalid request. The `branch` field is required.' });
    }
    const statusId = `status-${deployments.size + 1}`;
    const slug = branch
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    // A branch deployed before keeps its preview URL: Mintlify redeploys it.
    const previewUrl = `https://acme-${slug}.mintlify.app`;
    const deployment: FakeDeployment = { statusId, branch, previewUrl, status: 'queued', createdAt: stamp() };
    deployments.set(statusId, deployment);
    if (options.previewDeployMs !== undefined) {
      deployment.status = 'in_progress';
      const timer = setTimeout(() => {
        deployTimers.delete(timer);
        moveDeployment(deployment, { status: 'success', summary: 'Deployed' });
      }, options.previewDeployMs);
      deployTimers.add(timer);
    }
    return json(202, previewUrlsGiven ? { statusId, previewUrl } : { statusId });
  };

  /** Moves a deployment; ending it stamps endedAt once, a move back to work clears it. */
  const moveDeployment = (
    deployment: FakeDeployment,
    patch: Partial<Pick<FakeDeployment, 'status' | 'summary'>>,
  ): void => {
    Object.assign(deployment, patch);
    const ended = deployment.status === 'success' || deployment.status === 'failure';
    if (!ended) delete deployment.endedAt;
    else deployment.endedAt ??= stamp();
  };

  const statusOf = (deployment: FakeDeployment) => ({
    _id: deployment.statusId,
    projectId: options.projectId,
    createdAt: deployment.createdAt,
    ...(deployment.endedAt === undefined ? {} : { endedAt: deployment.endedAt }),
    ...(deploymentStatesGiven ? { status: deployment.status } : {}),
    ...(deployment.summary === undefined ? {} : { summary: deployment.summary }),
    logs: [],
    subdomain: 'acme',
    source: 'api',
    commit: { ref: deployment.branch },
  });

  /**
   * Counts a use of `limit` for `key` (the project for agent uses, the organization otherwise), or
   * answers 429 when the window is full (a refused request is not a use). Sliding windows, oldest first.
   */
  const used = new Map<string, number[]>();
  const overLimit = (limit: RateLimit | undefined, key: string): Answer | undefined => {
    if (options.rateLimits === false || limit === undefined) return undefined;
    const { max, windowMs, error } = RATE_LIMITS[limit];
    const now = clock();
    const counter = `${limit} ${key}`;
    const recent = (used.get(counter) ?? []).filter((at) => at > now - windowMs);
    if (recent.length >= max) {
      used.set(counter, recent);
      return json(429, { error });
    }
    used.set(counter, [...recent, now]);
    return undefined;
  };
  // One organization: the key's. Analytics requests and preview deployments count per organization.
  const ORGANIZATION = 'organization';

  /** What the real service would answer, with its side effects on the stored jobs. */
  const answerNormally = (request: RecordedRequest, segments: string[]): Answer => {
    if (request.operation === undefined) return json(404, { error: 'Not found' });
    if (request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return json(401, { error: DEFAULT_MESSAGES[401] });
    }
    // Agent uses count later: only a valid create or follow-up of an existing job of the key's project.
    const limit = RATE_LIMIT_OF[request.operation];
    const limited = limit === 'agent' ? undefined : overLimit(limit, ORGANIZATION);
    if (limited) return limited;
    if (request.operation === 'deployPreview') return previewAnswer(segments[4] ?? '', request.body);
    if (request.operation === 'deploymentStatus') {
      const deployment = deployments.get(segments[4] ?? '');
      return deployment ? json(200, statusOf(deployment)) : json(404, { error: 'Status not found' });
    }
    if (segments[3] !== options.projectId)
      return json(403, { error: 'API key has no access to this project' });
    const jobId = segments[5] ?? '';
    switch (request.operation) {
      case 'createJob': {
        const problem = promptProblem(request.body) ?? overLimit('agent', options.projectId);
        if (problem) return problem;
        jobCounter += 1;
        const job = newJob(`job-${jobCounter}`);
        jobs.set(job.id as string, job);
        return json(201, job);
      }
      case 'getJob': {
        const job = jobs.get(jobId);
        return job ? json(200, job) : json(404, { error: 'Job not found' });
      }
      case 'sendMessage': {
        const problem = promptProblem(request.body);
        if (problem) return problem;
        if (!jobs.has(jobId)) return json(404, { error: 'Job not found' });
        const limitedUse = overLimit('agent', options.projectId);
        if (limitedUse) return limitedUse;
        if (followUpsLater) return json(200, jobs.get(jobId));
        return json(200, setJob(jobId, { status: 'active', archivedAt: null, prLink: null }));
      }
      case 'visitors':
        return visitorsAnswer(request.query);
      case 'feedback':
        return feedbackAnswer(request.query);
      case 'feedbackByPage':
        return feedbackByPageAnswer(request.query);
      case 'searches':
        return searchesAnswer(request.query);
      case 'assistant':
        return assistantAnswer(request.query);
      default:
        return json(404, { error: 'Not found' });
    }
  };

  /**
   * The answer, if its spec allows it; else a 500 with the violation recorded for close() to throw
   * (the analytics spec declares a 500, but the test fails all the same when the fake closes).
   * Faults that change the answer on its way out break it after this.
   */
  const checked = (request: RecordedRequest, answer: Answer): Answer => {
    const where = `${request.method} ${request.path}`;
    let violation: string | undefined;
    if (request.operation === undefined) {
      violation = `${where} answered ${answer.status}: the specs have no such operation`;
    } else {
      const check = checkFakeAnswer(request.operation, answer.status, answer.body);
      if (!check.ok) {
        violation =
          `${request.operation} ${where} answered ${answer.status}, which breaks ${check.schema}: ` +
          `${check.errors.join('; ')}; body ${JSON.stringify(answer.body)?.slice(0, 500)}`;
      }
    }
    if (violation === undefined) return answer;
    violations.push(violation);
    return json(500, { error: `The Mintlify fake's answer breaks the spec: ${violation}` });
  };

  const takeFault = (request: RecordedRequest): Fault | undefined => {
    const entry = faults.find(({ match }) =>
      typeof match === 'function' ? match(request) : match === request.operation,
    );
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) faults = faults.filter((other) => other !== entry);
    return entry.fault;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { request, segments } = await readRequest(req);
    requests.push(request);
    if (options.latencyMs) await delay(options.latencyMs, undefined, { signal: shutdown.signal });

    const fault = takeFault(request);
    if (fault && 'delayMs' in fault && fault.phase !== 'body') {
      await delay(fault.delayMs, undefined, { signal: shutdown.signal });
    }
    if (fault && 'until' in fault && fault.until) {
      await Promise.race([
        fault.until,
        delay(2 ** 31 - 1, undefined, { signal: shutdown.signal, ref: false }),
      ]);
    }
    if (fault && 'status' in fault) {
      const headers = {
        ...fault.headers,
        ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
      };
      const body = fault.body ?? { error: DEFAULT_MESSAGES[fault.status] ?? 'Error' };
      await send(res, json(fault.status, body, headers), { rawText: fault.rawBody });
      return;
    }
    const answer = checked(request, answerNormally(request, segments));
    for (const listener of [...answerListeners]) listener(request, answer);
    if (!fault || 'delayMs' in fault || 'until' in fault) {
      const pauseMs = fault && 'delayMs' in fault && fault.phase === 'body' ? fault.delayMs : 0;
      await send(res, answer, { pauseMidBodyMs: pauseMs, signal: shutdown.signal });
    } else if ('destroySocket' in fault) {
      req.socket.destroy();
    } else if ('malformedJson' in fault) {
      const text = JSON.stringify(answer.body);
      await send(res, answer, { rawText: text.slice(0, Math.ceil(text.length / 2)) });
    } else {
      await send(res, { ...answer, body: breakSchema(request.operation, answer) });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Aborted by close(), or the client went away mid-request: the socket is gone, nothing to answer.
      if (shutdown.signal.aborted || res.destroyed || res.headersSent) return;
      violations.push(`${req.method ?? ''} ${req.url ?? ''}: the fake failed: ${String(error)}`);
      void send(res, json(500, { error: `fake failed: ${String(error)}` }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    jobs,
    deployments,
    setDeployment: (statusId, patch) => {
      const deployment = deployments.get(statusId);
      if (!deployment) throw new Error(`no deployment ${statusId}`);
      const next = { ...deployment };
      moveDeployment(next, patch);
      const check = checkFakeAnswer('deploymentStatus', 200, statusOf(next));
      if (!check.ok) {
        throw new Error(`setDeployment(${statusId}): the spec does not allow it: ${check.errors.join('; ')}`);
      }
      moveDeployment(deployment, patch);
    },
    setPreviewsAvailable: (available) => {
      previewsAvailable = available;
    },
    setPreviewUrlsGiven: (given) => {
      previewUrlsGiven = given;
    },
    setBranchesNamedAtOnce: (named) => {
      branchesNamedAtOnce = named;
    },
    setDeploymentStatesGiven: (given) => {
      deploymentStatesGiven = given;
    },
    setJob,
    takeUpFollowUpsLater: () => {
      followUpsLater = true;
    },
    addVisitors: (rows) => {
      refuseUnlessServable('addVisitors', 'visitors', { totals: NO_TOTALS, visitors: rows, hasMore: false });
      visitors.push(...rows);
    },
    setVisitors: (rows, totals) => {
      const page = { totals: totals ?? NO_TOTALS, visitors: rows, hasMore: false };
      refuseUnlessServable('setVisitors', 'visitors', page);
      visitors = [...rows];
      fixedTotals = totals;
    },
    setVisitorsOf: (dateFrom, rows, totals) => {
      const page = { totals: totals ?? NO_TOTALS, visitors: rows, hasMore: false };
      refuseUnlessServable(`setVisitorsOf(${dateFrom})`, 'visitors', page);
      visitorsByDateFrom.set(dateFrom, { rows: [...rows], totals });
    },
    setFeedback: (entries) => {
      const page = { feedback: entries.map(servedFeedback), nextCursor: null, hasMore: false };
      refuseUnlessServable('setFeedback', 'feedback', page);
      feedback = [...entries];
    },
    setSearches: (rows, totalSearches) => {
      const page = { searches: rows, totalSearches: totalSearches ?? sumOfHits(rows), nextCursor: null };
      refuseUnlessServable('setSearches', 'searches', page);
      searches = [...rows];
      fixedTotalSearches = totalSearches;
    },
    setConversations: (rows) => {
      refuseUnlessServable('setConversations', 'assistant', {
        conversations: rows,
        nextCursor: null,
        hasMore: false,
      });
      conversations = [...rows];
    },
    onAnswer: (listener) => {
      answerListeners.add(listener);
      return () => answerListeners.delete(listener);
    },
    injectFault: (match, fault, times = 1) => {
      faults.push({ match, fault, remaining: times });
    },
    clearFaults: () => {
      faults = [];
    },
    requestsTo: (method, path) =>
      requests.filter(
        (request) =>
          request.method === method &&
          (typeof path === 'string' ? request.path === path : path.test(request.path)),
      ),
    requestsFor: (operation) => requests.filter((request) => request.operation === operation),
    get violations() {
      return violations;
    },
    takeViolations: () => {
      const taken = violations;
      violations = [];
      return taken;
    },
    reset: () => {
      requests.length = 0;
      jobs.clear();
      visitors = [];
      fixedTotals = undefined;
      visitorsByDateFrom.clear();
      feedback = [];
      searches = [];
      fixedTotalSearches = undefined;
      conversations = [];
      faults = [];
      used.clear();
      deployments.clear();
      previewsAvailable = true;
      previewUrlsGiven = true;
      branchesNamedAtOnce = true;
      deploymentStatesGiven = true;
    },
    close: async () => {
      shutdown.abort();
      for (const timer of deployTimers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (violations.length > 0) {
        throw new Error(
          `The Mintlify fake gave ${violations.length} answer(s) its spec does not allow ` +
            `(each was sent as a 500):\n${violations.join('\n')}`,
        );
      }
    },
  };
}

function breakSchema(operation: FakeOperation | undefined, answer: Answer): unknown {
  if (answer.status < 200 || answer.status > 299) return answer.body;
  switch (operation) {
    case 'visitors':
    case 'feedback':
    case 'feedbackByPage':
    case 'assistant':
      return { ...(answer.body as object), hasMore: 'yes' };
    case 'searches':
      return { ...(answer.body as object), searches: 'x' };
  }
  return { ...(answer.body as object), status: 42 };
}
