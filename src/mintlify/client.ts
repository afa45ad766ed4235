/**
 * The Mintlify REST client: agent jobs (admin API v2), preview deployments, and the analytics
 * exports (v1: visitors, feedback, searches, assistant conversations).
 * It knows nothing of Slack. Every call sends the bearer key and our User-Agent over one
 * keep-alive pool, validates the answer against the published schema, and turns every failure
 * into one of the typed errors of `errors.ts`.
 */

import type { Dispatcher } from 'undici';
import { errors, Pool } from 'undici';
import type { z } from 'zod';
import {
  errorFromNetworkFailure,
  errorFromStatus,
  INVALID_REQUEST_CODE,
  type RequestFacts,
  schemaErrorFromBody,
} from './errorMapping.js';
import {
  ConnectionError,
  failedBeforeSending,
  isPassingFailure,
  RateLimitedError,
  ServiceError,
} from './errors.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, type Sleep, withRetry } from './retry.js';
import {
  type AgentJob,
  type AssistantPage,
  agentJobSchema,
  assistantPageSchema,
  type DeploymentStatus,
  deploymentStatusSchema,
  type FeedbackByPage,
  type FeedbackPage,
  feedbackByPageSchema,
  feedbackPageSchema,
  type PreviewDeployment,
  previewDeploymentSchema,
  type SearchesPage,
  searchesPageSchema,
  type VisitorsPage,
  visitorsPageSchema,
} from './schemas.js';

export interface MintlifyClientOptions {
  /** An admin key (`mint_...`). */
  apiKey: string;
  /** `https://api.mintlify.com` in production. */
  baseUrl: string;
  userAgent: string;
  /** `connectMs` applies only to the pool the client owns; an injected dispatcher brings its own. */
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  retry?: Partial<RetryPolicy>;
  /** Defaults to one keep-alive pool owned (and closed) by the client. */
  dispatcher?: Dispatcher;
  /** How to wait between retries; tests pass one that does not wait real seconds. */
  sleep?: Sleep;
  /**
   * Aborted when the bot stops and its work's grace is over: a read under way is cut then (it is
   * asked again later), so a slow answer does not hold the stop past its hard exit. A create or a
   * follow-up is never cut: its answer is what says whether the agent was started.
   */
  stopping?: AbortSignal;
}

export interface VisitorsQuery {
  /** ISO 8601 or YYYY-MM-DD. Always sent: the service's default range is undocumented. */
  dateFrom: string;
  /** Exclusive upper limit. */
  dateTo: string;
  /** 1 to 250; the service's default is 50. */
  limit?: number;
  offset?: number;
}

/** The `source` filter of the feedback endpoints. */
export type FeedbackSource = 'code_snippet' | 'contextual' | 'agent' | 'thumbs_only';

/** A feedback entry's review status in Mintlify's dashboard: the `status` filter of the feedback endpoints. */
export type FeedbackStatus = 'pending' | 'in_progress' | 'resolved' | 'dismissed';

/**
 * The analytics endpoints below share one limit with the visitors export: 100 requests per
 * organization per hour. Dates are ISO 8601 or YYYY-MM-DD, `dateTo` exclusive, both always sent.
 */
interface AnalyticsRange {
  dateFrom: string;
  dateTo: string;
}

export interface FeedbackQuery extends AnalyticsRange {
  /** 1 to 100; the service's default is 50. */
  limit?: number;
  /** The previous page's `nextCursor`, as is. */
  cursor?: string;
  source?: FeedbackSource;
  /** Only entries of these statuses (sent comma-separated); every status when left out. */
  status?: readonly FeedbackStatus[];
}

export interface FeedbackByPageQuery extends AnalyticsRange {
  /** Pages (paths) to return, 1 to 100; the service's default is 10. There is no cursor. */
  limit?: number;
  source?: FeedbackSource;
  /** Only entries of these statuses (sent comma-separated) are counted; every status when left out. */
  status?: readonly FeedbackStatus[];
}

export interface SearchesQuery extends AnalyticsRange {
  /** 1 to 100; the service's default is 50. */
  limit?: number;
  cursor?: string;
}

export interface AssistantQuery extends AnalyticsRange {
  /** 1 to 1000; the service's default is 100. */
  limit?: number;
  cursor?: string;
}

const DEFAULT_TIMEOUTS = { connectMs: 5_000, headersMs: 15_000, bodyMs: 15_000 };

interface Call<Schema extends z.ZodType> {
  operation: string;
  method: 'GET' | 'POST';
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  schema: Schema;
}

export class MintlifyClient {
  readonly #authorization: string;
  readonly #apiKey: string;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #userAgent: string;
  readonly #timeouts: typeof DEFAULT_TIMEOUTS;
  readonly #retryPolicy: RetryPolicy;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #sleep: Sleep | undefined;
  readonly #stopping: AbortSignal | undefined;
  #closed = false;

  constructor(options: MintlifyClientOptions) {
    if (!options.apiKey) throw new TypeError('MintlifyClient: apiKey is empty');
    const base = new URL(options.baseUrl);
    this.#apiKey = options.apiKey;
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#userAgent = options.userAgent;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...definedOnly(options.timeouts ?? {}) };
    this.#retryPolicy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(options.retry ?? {}) };
    this.#sleep = options.sleep;
    this.#stopping = options.stopping;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Pool(this.#origin, {
        connect: { timeout: this.#timeouts.connectMs },
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.bodyMs,
        keepAliveTimeout: 30_000,
      });
  }

  /** POST /v2/agent/{projectId}/job: starts a background agent job (201). */
  createJob(projectId: string, prompt: string): Promise<AgentJob> {
    return this.#call({
      operation: 'createJob',
      method: 'POST',
      path: `/v2/agent/${encodeURIComponent(projectId)}/job`,
      body: { prompt },
      schema: agentJobSchema,
    });
  }

  /** GET /v2/agent/{projectId}/job/{id}: the job's current state, for polling. */
  getJob(projectId: string, jobId: string): Promise<AgentJob> {
    return this.#call({
      operation: 'getJob',
      method: 'GET',
      path: `/v2/agent/${encodeURIComponent(projectId)}/job/${encodeURIComponent(jobId)}`,
      schema: agentJobSchema,
    });
  }

  /** POST /v2/agent/{projectId}/job/{id}/message: a follow-up instruction for a job. */
  sendMessage(projectId: string, jobId: string, prompt: string): Promise<AgentJob> {
    return this.#call({
      operation: 'sendMessage',
      method: 'POST',
      path: `/v2/agent/${encodeURIComponent(projectId)}/job/${encodeURIComponent(jobId)}/message`,
      body: { prompt },
      schema: agentJobSchema,
    });
  }

  /**
   * POST /v1/project/preview/{projectId}: deploys a preview of `branch` (202; a preview that
   * exists is deployed again). 403 on a plan without previews. Never retried once it may have been sent.
   */
  deployPreview(projectId: string, branch: string): Promise<PreviewDeployment> {
    return this.#call({
      operation: 'deployPreview',
      method: 'POST',
      path: `/v1/project/preview/${encodeURIComponent(projectId)}`,
      body: { branch },
      schema: previewDeploymentSchema,
    });
  }

  /** GET /v1/project/update-status/{statusId}: a deployment's state (queued, in_progress, success, failure). */
  deploymentStatus(statusId: string): Promise<DeploymentStatus> {
    return this.#call({
      operation: 'deploymentStatus',
      method: 'GET',
      path: `/v1/project/update-status/${encodeURIComponent(statusId)}`,
      schema: deploymentStatusSchema,
    });
  }

  /** GET /v1/analytics/{projectId}/visitors: one page of unique visitors per path. */
  visitorsPage(projectId: string, query: VisitorsQuery): Promise<VisitorsPage> {
    const params = new URLSearchParams({ dateFrom: query.dateFrom, dateTo: query.dateTo });
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.offset !== undefined) params.set('offset', String(query.offset));
    return this.#call({
      operation: 'visitorsPage',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(projectId)}/visitors`,
      query: params,
      schema: visitorsPageSchema,
    });
  }

  /** GET /v1/analytics/{projectId}/feedback: one page of feedback entries; follow `nextCursor`. */
  feedbackPage(projectId: string, query: FeedbackQuery): Promise<FeedbackPage> {
    const params = new URLSearchParams({ dateFrom: query.dateFrom, dateTo: query.dateTo });
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    if (query.source !== undefined) params.set('source', query.source);
    if (query.status !== undefined) params.set('status', query.status.join(','));
    return this.#call({
      operation: 'feedbackPage',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(projectId)}/feedback`,
      query: params,
      schema: feedbackPageSchema,
    });
  }

  /** GET /v1/analytics/{projectId}/feedback/by-page: feedback counts per page path (one page, no cursor). */
  feedbackByPage(projectId: string, query: FeedbackByPageQuery): Promise<FeedbackByPage> {
    const params = new URLSearchParams({ dateFrom: query.dateFrom, dateTo: query.dateTo });
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.source !== undefined) params.set('source', query.source);
    if (query.status !== undefined) params.set('status', query.status.join(','));
    return this.#call({
      operation: 'feedbackByPage',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(projectId)}/feedback/by-page`,
      query: params,
      schema: feedbackByPageSchema,
    });
  }

  /** GET /v1/analytics/{projectId}/searches: one page of search terms, most searched first. */
  searchesPage(projectId: string, query: SearchesQuery): Promise<SearchesPage> {
    const params = new URLSearchParams({ dateFrom: query.dateFrom, dateTo: query.dateTo });
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    return this.#call({
      operation: 'searchesPage',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(projectId)}/searches`,
      query: params,
      schema: searchesPageSchema,
    });
  }

  /** GET /v1/analytics/{projectId}/assistant: one page of assistant conversations; follow `nextCursor`. */
  assistantPage(projectId: string, query: AssistantQuery): Promise<AssistantPage> {
    const params = new URLSearchParams({ dateFrom: query.dateFrom, dateTo: query.dateTo });
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    return this.#call({
      operation: 'assistantPage',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(projectId)}/assistant`,
      query: params,
      schema: assistantPageSchema,
    });
  }

  /** Closes the pool the client owns; an injected dispatcher is left to its owner. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  #call<Schema extends z.ZodType>(call: Call<Schema>): Promise<z.output<Schema>> {
    const analytics = call.method === 'GET' && call.path.startsWith('/v1/analytics/');
    const retryable =
      call.method !== 'GET'
        ? failedBeforeSending
        : analytics
          ? isWorthRetryingAnalyticsRead
          : isWorthRetryingRead;
    return withRetry(() => this.#attempt(call), {
      policy: analytics
        ? { ...this.#retryPolicy, maxAttempts: Math.min(this.#retryPolicy.maxAttempts, ANALYTICS_ATTEMPTS) }
        : this.#retryPolicy,
      // After close() nothing new can be sent: waiting for a retry would only hold up shutdown.
      shouldRetry: (error) => !this.#closed && retryable(error) && !madeNoRequest(error),
      requestedDelayMs: (error) =>
        error instanceof RateLimitedError || error instanceof ServiceError ? error.retryAfterMs : undefined,
      ...(this.#sleep ? { sleep: this.#sleep } : {}),
    });
  }

  async #attempt<Schema extends z.ZodType>(call: Call<Schema>): Promise<z.output<Schema>> {
    const facts: RequestFacts = {
      operation: call.operation,
      method: call.method,
      timeouts: this.#timeouts,
      redact: (text) => text.replaceAll(this.#apiKey, '[redacted]'),
    };
    if (this.#closed) {
      // Work the stop left running: nothing can be sent any more, and the caller must know it was not.
      throw errorFromNetworkFailure(facts, new errors.ClientClosedError(), 'before-answer');
    }
    const search = call.query ? `?${call.query.toString()}` : '';
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#dispatcher.request({
        origin: this.#origin,
        path: `${this.#basePath}${call.path}${search}`,
        method: call.method,
        headers: {
          authorization: this.#authorization,
          'user-agent': this.#userAgent,
          accept: 'application/json',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: call.body === undefined ? null : JSON.stringify(call.body),
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.bodyMs,
        ...(call.method === 'GET' && this.#stopping ? { signal: this.#stopping } : {}),
      });
    } catch (error) {
      throw errorFromNetworkFailure(facts, error, 'before-answer');
    }

    let bodyText: string;
    try {
      bodyText = await response.body.text();
    } catch (error) {
      throw errorFromNetworkFailure(facts, error, 'reading-body');
    }

    const { statusCode } = response;
    if (statusCode < 200 || statusCode > 299) {
      const { headers } = response;
      throw errorFromStatus(
        facts,
        statusCode,
        headerValue(headers['retry-after']),
        bodyText,
        headerValue(headers.location),
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(bodyText);
    } catch {
      // The SyntaxError is not kept as the cause: V8 quotes the body in its message, unredacted.
      const problem = bodyText.trim() === '' ? 'the body is empty' : 'the body is not JSON';
      throw schemaErrorFromBody(facts, statusCode, [problem], bodyText);
    }
    const parsed = call.schema.safeParse(json);
    if (!parsed.success) {
      throw schemaErrorFromBody(facts, statusCode, summarizeIssues(parsed.error.issues), bodyText);
    }
    return parsed.data;
  }
}

/** undici would not make the request (an API key with a character no header can carry): the same again fails the same. */
function madeNoRequest(error: unknown): boolean {
  return error instanceof ConnectionError && error.code === INVALID_REQUEST_CODE;
}

/** Reads may be repeated safely: retry what is likely to pass on a second try. */
function isWorthRetryingRead(error: unknown): boolean {
  return error instanceof RateLimitedError || isPassingFailure(error);
}

/** Tries of an analytics read in all: each spends one of the organization's 100 requests an hour. */
const ANALYTICS_ATTEMPTS = 2;

/**
 * Every analytics request, retries included, spends one of the organization's 100 an hour: a 429
 * goes to the caller, which waits it out at its own pace (collectVisitors) or does without that
 * part (the digest's struggles), rather than spend three more on quick tries; a 5xx or a timeout
 * gets one quick try more (ANALYTICS_ATTEMPTS), and trouble that outlasts it is the caller's too.
 */
function isWorthRetryingAnalyticsRead(error: unknown): boolean {
  return isPassingFailure(error);
}

/**
 * A POST that may have reached Mintlify is never retried: a second create (or follow-up) would
 * start the agent twice. Only a connection that failed before sending is safe to try again.
 */
const MAX_PROBLEMS = 5;

function summarizeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = issues.slice(0, MAX_PROBLEMS).map((issue) => {
    const path = issue.path.map(String).join('.') || '(body)';
    return `${path}: ${issue.message}`;
  });
  if (issues.length > MAX_PROBLEMS) lines.push(`and ${issues.length - MAX_PROBLEMS} more`);
  return lines;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
