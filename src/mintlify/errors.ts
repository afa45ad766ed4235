/**
 * One error class per way a call to Mintlify can fail, so callers branch on `kind` (or
 * `instanceof`) instead of parsing messages. Messages are written for an operator's log and
 * never contain the API key: the client redacts it from anything the service echoes back.
 */

export type MintlifyErrorKind =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'service'
  | 'connection'
  | 'timeout'
  | 'schema'
  | 'redirected'
  | 'unexpected_status';

export interface MintlifyErrorContext {
  /** The client method that failed, e.g. `createJob`. */
  operation: string;
  status?: number;
  /** The `error` text of the service's answer, when it gave one. */
  serviceMessage?: string;
  cause?: unknown;
}

export abstract class MintlifyError extends Error {
  abstract readonly kind: MintlifyErrorKind;
  readonly operation: string;
  readonly status?: number;
  readonly serviceMessage?: string;

  constructor(message: string, context: MintlifyErrorContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = new.target.name;
    this.operation = context.operation;
    if (context.status !== undefined) this.status = context.status;
    if (context.serviceMessage !== undefined) this.serviceMessage = context.serviceMessage;
  }
}

const said = (serviceMessage: string | undefined): string => (serviceMessage ? `: ${serviceMessage}` : '');

/**
 * 400: the request body or query broke the service's rules (empty prompt, limit out of range).
 * Also any other 4xx the specs do not list (409, 413, 422, ...) but 408 and those below: the
 * service refused the request, so it did nothing with it.
 */
export class InvalidRequestError extends MintlifyError {
  readonly kind = 'invalid_request' as const;
  override readonly status: number;
  override readonly serviceMessage: string;
  readonly details: string[];

  constructor(operation: string, serviceMessage: string, details: string[] = [], status = 400) {
    const detailText = details.length > 0 ? ` (${details.join('; ')})` : '';
    super(`${operation}: Mintlify rejected the request (${status})${said(serviceMessage)}${detailText}`, {
      operation,
      status,
      serviceMessage,
    });
    this.status = status;
    this.serviceMessage = serviceMessage;
    this.details = details;
  }
}

/** 401: the admin key is wrong or expired (keys can expire after 7 to 90 days). */
export class UnauthorizedError extends MintlifyError {
  readonly kind = 'unauthorized' as const;

  constructor(operation: string, serviceMessage?: string) {
    super(
      `${operation}: Mintlify refused the API key (401): it is wrong or expired; create a new admin key (mint_...) on the API keys page`,
      { operation, status: 401, serviceMessage },
    );
  }
}

/**
 * 403: the project is not one of the key's organization, this server's IP is not on the key's
 * allowlist, or the key lacks the scope (GET: read, POST: write).
 */
export class ForbiddenError extends MintlifyError {
  readonly kind = 'forbidden' as const;
  readonly neededScope: 'read' | 'write';

  constructor(operation: string, neededScope: 'read' | 'write', serviceMessage?: string) {
    super(
      `${operation}: Mintlify denied access (403): the project is not one of the key's organization, this server's IP is not on the key's allowlist, or the key lacks the "${neededScope}" scope${said(serviceMessage)}`,
      { operation, status: 403, serviceMessage },
    );
    this.neededScope = neededScope;
  }
}

/** 404: unknown job (or project). */
export class NotFoundError extends MintlifyError {
  readonly kind = 'not_found' as const;

  constructor(operation: string, serviceMessage?: string) {
    super(`${operation}: Mintlify found nothing there (404)${said(serviceMessage)}`, {
      operation,
      status: 404,
      serviceMessage,
    });
  }
}

/** 429: a rate limit was hit (agent: 100 uses per project per hour; analytics: 100 per organization per hour). */
export class RateLimitedError extends MintlifyError {
  readonly kind = 'rate_limited' as const;
  /** From `Retry-After` (seconds or HTTP-date); undefined when the service did not say. */
  readonly retryAfterMs: number | undefined;

  constructor(operation: string, retryAfterMs: number | undefined, serviceMessage?: string) {
    const when =
      retryAfterMs === undefined ? 'no Retry-After given' : `retry after ${Math.ceil(retryAfterMs / 1000)} s`;
    super(`${operation}: Mintlify rate limit reached (429), ${when}${said(serviceMessage)}`, {
      operation,
      status: 429,
      serviceMessage,
    });
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx: the service failed; worth retrying for reads. */
export class ServiceError extends MintlifyError {
  readonly kind = 'service' as const;
  override readonly status: number;
  /** From `Retry-After` (a 503 for maintenance may say how long); undefined when the service did not say. */
  readonly retryAfterMs: number | undefined;

  constructor(operation: string, status: number, serviceMessage?: string, retryAfterMs?: number) {
    super(`${operation}: Mintlify failed with ${status}${said(serviceMessage)}`, {
      operation,
      status,
      serviceMessage,
    });
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/** The network failed. `mayHaveReachedService` is false only when the connection failed before sending. */
export class ConnectionError extends MintlifyError {
  readonly kind = 'connection' as const;
  readonly mayHaveReachedService: boolean;
  /** The system or undici error code, e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`. */
  readonly code: string | undefined;

  constructor(operation: string, mayHaveReachedService: boolean, code: string | undefined, cause?: unknown) {
    const what = mayHaveReachedService
      ? 'the connection broke after the request was sent, so Mintlify may have acted on it'
      : 'the request was not sent';
    super(`${operation}: could not talk to Mintlify (${code ?? 'network error'}): ${what}`, {
      operation,
      cause,
    });
    this.mayHaveReachedService = mayHaveReachedService;
    this.code = code;
  }
}

export type TimeoutPhase = 'connect' | 'headers' | 'body';

/** No answer in time. A connect timeout never reached the service; headers and body timeouts may have. */
export class TimeoutError extends MintlifyError {
  readonly kind = 'timeout' as const;
  readonly phase: TimeoutPhase;
  readonly timeoutMs: number | undefined;
  readonly mayHaveReachedService: boolean;

  constructor(operation: string, phase: TimeoutPhase, timeoutMs: number | undefined, cause?: unknown) {
    const limit = timeoutMs === undefined ? '' : ` after ${timeoutMs} ms`;
    super(`${operation}: Mintlify did not answer in time (${phase} timeout${limit})`, { operation, cause });
    this.phase = phase;
    this.timeoutMs = timeoutMs;
    this.mayHaveReachedService = phase !== 'connect';
  }
}

/** A 2xx answer that is not JSON or does not match the published schema. */
export class SchemaError extends MintlifyError {
  readonly kind = 'schema' as const;
  /** One line per problem, e.g. `hasMore: expected boolean, received string`. */
  readonly problems: string[];
  /** The start of the body (redacted, at most a few hundred characters), for the log. */
  readonly bodySnippet: string;

  constructor(operation: string, status: number, problems: string[], bodySnippet: string, cause?: unknown) {
    super(
      `${operation}: Mintlify's answer (${status}) does not match the expected shape: ${problems.join('; ')}`,
      { operation, status, cause },
    );
    this.problems = problems;
    this.bodySnippet = bodySnippet;
  }
}

/**
 * 301, 302, 307 or 308: what answered sends the request elsewhere instead of handling it (it is
 * not followed: the key would go along). Mintlify's API does not redirect, so MINTLIFY_API_URL is
 * likely not its address; nothing was done.
 */
export class RedirectedError extends MintlifyError {
  readonly kind = 'redirected' as const;
  override readonly status: number;
  /** Where the answer pointed (redacted, shortened); undefined when it did not say. */
  readonly location: string | undefined;

  constructor(operation: string, status: number, location: string | undefined) {
    super(
      `${operation}: Mintlify's API address answered with a redirect (${status}${location ? ` to ${location}` : ''}) instead of handling the request, which was not followed`,
      { operation, status },
    );
    this.status = status;
    this.location = location;
  }
}

/** Any status the specs and docs do not lead us to expect (1xx, 303, 408, ...). */
export class UnexpectedStatusError extends MintlifyError {
  readonly kind = 'unexpected_status' as const;

  constructor(operation: string, status: number, serviceMessage?: string) {
    super(`${operation}: unexpected answer ${status} from Mintlify${said(serviceMessage)}`, {
      operation,
      status,
      serviceMessage,
    });
  }
}

/** Every concrete error, so `switch (error.kind)` narrows to the right class. */
export type AnyMintlifyError =
  | InvalidRequestError
  | UnauthorizedError
  | ForbiddenError
  | NotFoundError
  | RateLimitedError
  | ServiceError
  | ConnectionError
  | TimeoutError
  | SchemaError
  | RedirectedError
  | UnexpectedStatusError;

export function isMintlifyError(error: unknown): error is AnyMintlifyError {
  return error instanceof MintlifyError;
}

/** Mintlify in trouble (a 5xx, no answer in time, a cut connection): the same read may well pass later. */
export function isPassingFailure(error: unknown): error is ServiceError | ConnectionError | TimeoutError {
  return error instanceof ServiceError || error instanceof ConnectionError || error instanceof TimeoutError;
}

const REFUSALS: ReadonlySet<MintlifyErrorKind> = new Set([
  'rate_limited',
  'unauthorized',
  'forbidden',
  'not_found',
  'invalid_request',
  'redirected',
]);

/** The connection failed, or no answer came, before the request was sent: Mintlify never saw it. */
export function failedBeforeSending(error: unknown): boolean {
  return (error instanceof ConnectionError || error instanceof TimeoutError) && !error.mayHaveReachedService;
}

/**
 * Mintlify did nothing with the request: it refused it (a 4xx but 408), something else answered
 * with a redirect, or the request never left this machine. A create that failed this way made no job, so asking again cannot make a second one.
 */
export function didNothing(error: unknown): boolean {
  return (isMintlifyError(error) && REFUSALS.has(error.kind)) || failedBeforeSending(error);
}
