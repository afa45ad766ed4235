/**
 * Turns what came back from one HTTP attempt (a status and body, or a network failure) into the
 * typed error of `errors.ts`. Anything the service sent is redacted and shortened before it
 * lands in a message, so a log line never carries the key or a megabyte of body.
 */
import {
  ConnectionError,
  ForbiddenError,
  InvalidRequestError,
  type MintlifyError,
  NotFoundError,
  RateLimitedError,
  RedirectedError,
  SchemaError,
  ServiceError,
  TimeoutError,
  type TimeoutPhase,
  UnauthorizedError,
  UnexpectedStatusError,
} from './errors.js';
import { parseRetryAfter } from './retry.js';
import { errorBodySchema } from './schemas.js';

export interface RequestFacts {
  operation: string;
  method: 'GET' | 'POST';
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  /** Removes the API key from text that came from outside. */
  redact: (text: string) => string;
}

const MAX_MESSAGE_CHARS = 300;
const MAX_SNIPPET_CHARS = 500;

export function errorFromStatus(
  facts: RequestFacts,
  status: number,
  retryAfter: string | undefined,
  bodyText: string,
  location?: string,
): MintlifyError {
  const { operation } = facts;
  if (REDIRECTS.has(status)) {
    const where = location?.trim() ? shorten(facts.redact(location), MAX_MESSAGE_CHARS) : undefined;
    return new RedirectedError(operation, status, where);
  }
  const { message, details } = readErrorBody(bodyText, facts.redact);
  if (status === 400) return new InvalidRequestError(operation, message ?? '', details);
  if (status === 401) return new UnauthorizedError(operation, message);
  if (status === 403)
    return new ForbiddenError(operation, facts.method === 'GET' ? 'read' : 'write', message);
  if (status === 404) return new NotFoundError(operation, message);
  if (status === 429) return new RateLimitedError(operation, parseRetryAfter(retryAfter), message);
  // A 408 says the request did not arrive in time, so it may or may not have been acted on.
  if (status >= 400 && status <= 499 && status !== 408)
    return new InvalidRequestError(operation, message ?? '', details, status);
  if (status >= 500 && status <= 599)
    return new ServiceError(operation, status, message, parseRetryAfter(retryAfter));
  return new UnexpectedStatusError(operation, status, message);
}

/** Redirects that send the request elsewhere unhandled (a 303 answers one that was handled). */
const REDIRECTS = new Set([301, 302, 307, 308]);

export function schemaErrorFromBody(
  facts: RequestFacts,
  status: number,
  problems: string[],
  bodyText: string,
  cause?: unknown,
): SchemaError {
  const snippet = shorten(facts.redact(bodyText), MAX_SNIPPET_CHARS);
  return new SchemaError(facts.operation, status, problems.map(facts.redact), snippet, cause);
}

/** undici's code for a request it would not make (a header value it cannot carry, say): asking again is futile. */
export const INVALID_REQUEST_CODE = 'UND_ERR_INVALID_ARG';

/** Error codes of a connection that failed before any byte of the request was written. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  // Asked of a pool being closed: undici refuses it before it is queued. (Not UND_ERR_DESTROYED,
  // which a request already written also gets when its pool is destroyed.)
  'UND_ERR_CLOSED',
  // undici refused the request as made (a header no HTTP request can carry) before queueing it.
  INVALID_REQUEST_CODE,
]);

const TIMEOUT_PHASES: Record<string, TimeoutPhase> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'headers',
  UND_ERR_BODY_TIMEOUT: 'body',
};

export function errorFromNetworkFailure(
  facts: RequestFacts,
  error: unknown,
  stage: 'before-answer' | 'reading-body',
): MintlifyError {
  const code = errorCode(error);
  const phase = code === undefined ? undefined : TIMEOUT_PHASES[code];
  if (phase !== undefined) {
    const timeoutMs = phase === 'connect' ? facts.timeouts.connectMs : facts.timeouts[`${phase}Ms`];
    return new TimeoutError(facts.operation, phase, timeoutMs, error);
  }
  // Once an answer has started, the request was certainly sent; before it, only connect failures prove it was not.
  const notSent = stage === 'before-answer' && code !== undefined && NOT_SENT_CODES.has(code);
  return new ConnectionError(facts.operation, !notSent, code, error);
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  // Happy-eyeballs connects report an AggregateError with one error per address tried.
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return undefined;
}

function readErrorBody(
  bodyText: string,
  redact: (text: string) => string,
): { message: string | undefined; details: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    // Not JSON: a short plain-text answer is still worth showing, an HTML error page is not.
    const text = bodyText.trim();
    const plain = text !== '' && !text.startsWith('<') ? shorten(redact(text), MAX_MESSAGE_CHARS) : undefined;
    return { message: plain, details: [] };
  }
  const parsed = errorBodySchema.safeParse(json);
  if (!parsed.success) return { message: undefined, details: [] };
  const message =
    parsed.data.error === undefined ? undefined : shorten(redact(parsed.data.error), MAX_MESSAGE_CHARS);
  const details = (parsed.data.details ?? [])
    .slice(0, 10)
    .map((detail) => shorten(redact(detail.message), MAX_MESSAGE_CHARS));
  return { message, details };
}

function shorten(text: string, maxChars: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= maxChars ? oneLine : `${oneLine.slice(0, maxChars)}… (${oneLine.length} chars)`;
}
