/**
 * A loopback stand-in for Mintlify's agent-job (admin v2) and visitors (analytics v1) endpoints.
 * It answers only what the published specs and docs allow (test/contracts/), records every
 * request for assertions, and lets a test drive job states and inject faults.
 *
 * Choices the docs leave open, made here on purpose:
 * - A follow-up reopens the job: status -> active, archivedAt -> null, prLink kept (the agent
 *   keeps working on the same branch and pull request).
 * - A project other than `projectId` answers 403 (the key has no access to it).
 * - Visitors requests without dateFrom/dateTo answer 400: the service's default range is
 *   undocumented, so the bot must always send both.
 * - Visitors rows are served in insertion order, unsorted; the date range filters nothing, except
 *   that rows set for one `dateFrom` with `setVisitorsOf` answer the requests starting that day.
 * - A `destroySocket` fault lets the request take effect (a job is created) before the socket is
 *   cut, as when an answer is lost on the way back.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { AgentJob, DeploymentState, VisitorsPage, VisitorsRow } from '../../src/mintlify/index.js';
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
  /** Answer this status with `{error}`, or `body` as JSON, or `rawBody` as is; e.g. 401, 403, 429, 503. */
  | { status: number; retryAfter?: string; body?: unknown; rawBody?: string }
  /** Answer normally, but wait first: before the headers (default) or in the middle of the body. */
  | { delayMs: number; phase?: 'headers' | 'body' }
  /** Answer normally, with the JSON cut short. */
  | { malformedJson: true }
  /** Answer normally, with a body that breaks the spec (`status: 42`, `hasMore: 'yes'`). */
  | { schemaBreaking: true }
  /** Act on the request, then cut the connection instead of answering. */
  | { destroySocket: true };

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
}

export type VisitorsTotals = VisitorsPage['totals'];

/** A preview deployment as the fake keeps it. */
export interface FakeDeployment {
  statusId: string;
  branch: string;
  previewUrl: string;
  status: DeploymentState;
  summary?: string;
}

export interface MintlifyFake {
  url: string;
  port: number;
  requests: RecordedRequest[];
  jobs: Map<string, AgentJob>;
  /** Preview deployments by status id, in the order they were asked for. */
  deployments: Map<string, FakeDeployment>;
  /** Ends (or moves) a deployment: `success`, `failure` (with a summary), `in_progress`. */
  setDeployment(statusId: string, patch: Partial<Pick<FakeDeployment, 'status' | 'summary'>>): void;
  /** false: the plan has no previews, and asking for one answers 403. */
  setPreviewsAvailable(available: boolean): void;
  /** Merges `patch` into the job (creating it if unknown); archiving sets archivedAt unless given. */
  setJob(id: string, patch: Partial<AgentJob>): AgentJob;
  addVisitors(rows: VisitorsRow[]): void;
  /** Replaces the rows; totals default to the column sums. */
  setVisitors(rows: VisitorsRow[], totals?: VisitorsTotals): void;
  /** The rows (and totals) for requests whose dateFrom is this day (YYYY-MM-DD), e.g. last week's. */
  setVisitorsOf(dateFrom: string, rows: VisitorsRow[], totals?: VisitorsTotals): void;
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
  /** Forgets requests, jobs, visitors and faults. */
  reset(): void;
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

export async function startMintlifyFake(options: MintlifyFakeOptions): Promise<MintlifyFake> {
  const requests: RecordedRequest[] = [];
  const jobs = new Map<string, AgentJob>();
  let visitors: VisitorsRow[] = [];
  let fixedTotals: VisitorsTotals | undefined;
  const visitorsByDateFrom = new Map<string, { rows: VisitorsRow[]; totals: VisitorsTotals | undefined }>();
  const answerListeners = new Set<(request: RecordedRequest, answer: Answer) => void>();
  let faults: Array<{ match: FaultMatch; fault: Fault; remaining: number }> = [];
  let jobCounter = 0;
  const deployments = new Map<string, FakeDeployment>();
  let previewsAvailable = true;
  const deployTimers = new Set<NodeJS.Timeout>();
  const shutdown = new AbortController();
  // Every answer waiting out `latencyMs` listens on it: under load, many more than Node's default 10.
  setMaxListeners(0, shutdown.signal);

  const newJob = (id: string): AgentJob => ({
    id,
    status: 'active',
    source: { repository: options.repository ?? 'https://github.com/acme/docs', ref: `mintlify/${id}` },
    model: options.model ?? 'sonnet',
    prLink: null,
    createdAt: new Date().toISOString(),
    archivedAt: null,
  });

  const setJob = (id: string, patch: Partial<AgentJob>): AgentJob => {
    const current = jobs.get(id) ?? newJob(id);
    const next: AgentJob = { ...current, ...patch, source: { ...current.source, ...patch.source } };
    if (patch.status === 'archived' && !('archivedAt' in patch)) next.archivedAt = new Date().toISOString();
    jobs.set(id, next);
    return next;
  };

  const promptProblem = (body: unknown): Answer | undefined => {
    const prompt = (body as { prompt?: unknown } | undefined)?.prompt;
    if (typeof prompt === 'string' && prompt.length >= 1) return undefined;
    return json(400, { error: 'Invalid request: prompt must be a string of at least 1 character' });
  };

  const visitorsAnswer = (query: Record<string, string>): Answer => {
    const details: string[] = [];
    for (const name of ['dateFrom', 'dateTo'] as const) {
      const value = query[name];
      if (value === undefined)
        details.push(`${name} is required by this fake (the default range is undocumented)`);
      else if (!DATE_PATTERN.test(value) || Number.isNaN(Date.parse(value)))
        details.push(`${name} must be an ISO 8601 date-time or YYYY-MM-DD`);
    }
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!/^\d+$/.test(query.limit ?? '50') || limit < 1 || limit > 250)
      details.push('limit must be an integer from 1 to 250');
    const offset = query.offset === undefined ? 0 : Number(query.offset);
    if (!/^\d+$/.test(query.offset ?? '0')) details.push('offset must be an integer >= 0');
    if (details.length > 0) {
      return json(400, {
        error: 'Invalid query parameters',
        details: details.map((message) => ({ message })),
      });
    }
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
    const deployment: FakeDeployment = { statusId, branch, previewUrl, status: 'queued' };
    deployments.set(statusId, deployment);
    if (options.previewDeployMs !== undefined) {
      deployment.status = 'in_progress';
      const timer = setTimeout(() => {
        deployTimers.delete(timer);
        deployment.status = 'success';
        deployment.summary = 'Deployed';
      }, options.previewDeployMs);
      deployTimers.add(timer);
    }
    return json(202, { statusId, previewUrl });
  };

  const statusOf = (deployment: FakeDeployment) => ({
    _id: deployment.statusId,
    projectId: options.projectId,
    createdAt: new Date().toISOString(),
    ...(deployment.status === 'success' || deployment.status === 'failure'
      ? { endedAt: new Date().toISOString() }
      : {}),
    status: deployment.status,
    ...(deployment.summary === undefined ? {} : { summary: deployment.summary }),
    logs: [],
    subdomain: 'acme',
    source: 'api',
    commit: { ref: deployment.branch },
  });

  /** What the real service would answer, with its side effects on the stored jobs. */
  const answerNormally = (request: RecordedRequest, segments: string[]): Answer => {
    if (request.operation === undefined) return json(404, { error: 'Not found' });
    if (request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return json(401, { error: DEFAULT_MESSAGES[401] });
    }
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
        const problem = promptProblem(request.body);
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
        return json(200, setJob(jobId, { status: 'active', archivedAt: null }));
      }
      case 'visitors':
        return visitorsAnswer(request.query);
      default:
        return json(404, { error: 'Not found' });
    }
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
    if (fault && 'status' in fault) {
      const headers = fault.retryAfter === undefined ? undefined : { 'retry-after': fault.retryAfter };
      const body = fault.body ?? { error: DEFAULT_MESSAGES[fault.status] ?? 'Error' };
      await send(res, json(fault.status, body, headers), { rawText: fault.rawBody });
      return;
    }
    if (fault && 'delayMs' in fault && fault.phase !== 'body') {
      await delay(fault.delayMs, undefined, { signal: shutdown.signal });
    }
    const answer = answerNormally(request, segments);
    for (const listener of [...answerListeners]) listener(request, answer);
    if (!fault || 'delayMs' in fault) {
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
      // Aborted by close(): the socket is gone, nothing to answer.
      if (!shutdown.signal.aborted) void send(res, json(500, { error: `fake failed: ${String(error)}` }));
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
      Object.assign(deployment, patch);
    },
    setPreviewsAvailable: (available) => {
      previewsAvailable = available;
    },
    setJob,
    addVisitors: (rows) => {
      visitors.push(...rows);
    },
    setVisitors: (rows, totals) => {
      visitors = [...rows];
      fixedTotals = totals;
    },
    setVisitorsOf: (dateFrom, rows, totals) => {
      visitorsByDateFrom.set(dateFrom, { rows: [...rows], totals });
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
    reset: () => {
      requests.length = 0;
      jobs.clear();
      visitors = [];
      fixedTotals = undefined;
      visitorsByDateFrom.clear();
      faults = [];
      deployments.clear();
      previewsAvailable = true;
    },
    close: async () => {
      shutdown.abort();
      for (const timer of deployTimers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function breakSchema(operation: FakeOperation | undefined, answer: Answer): unknown {
  if (answer.status < 200 || answer.status > 299) return answer.body;
  if (operation === 'visitors') return { ...(answer.body as object), hasMore: 'yes' };
  return { ...(answer.body as object), status: 42 };
}
