/**
 * The wire side of the Mintlify fake: which operation a request is, what it carried, and how an
 * answer is written (whole, stalled halfway, or cut short). The rules of the service live in
 * mintlifyFake.ts.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

export type FakeOperation =
  | 'createJob'
  | 'getJob'
  | 'sendMessage'
  | 'visitors'
  | 'feedback'
  | 'feedbackByPage'
  | 'searches'
  | 'assistant'
  | 'deployPreview'
  | 'deploymentStatus';

export interface RecordedRequest {
  operation: FakeOperation | undefined;
  method: string;
  /** As received, still percent-encoded, without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The JSON body, or undefined when empty or not JSON. */
  body: unknown;
}

export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): Answer => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});

/** Reads the whole request; `segments` are the decoded path segments ('' first). */
export async function readRequest(
  req: IncomingMessage,
): Promise<{ request: RecordedRequest; segments: string[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', 'http://fake.invalid');
  const segments = url.pathname.split('/').map(safeDecode);
  const method = req.method ?? '';
  const request: RecordedRequest = {
    operation: operationOf(method, segments),
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    rawBody,
    body: parseJson(rawBody),
  };
  return { request, segments };
}

export interface SendOptions {
  /** Write half the body, wait this long, then the rest (a body that stalls). */
  pauseMidBodyMs?: number;
  signal?: AbortSignal;
  /** Sent as is instead of `answer.body` as JSON. */
  rawText?: string;
}

export async function send(res: ServerResponse, answer: Answer, options: SendOptions = {}): Promise<void> {
  if (res.destroyed || res.headersSent) return;
  const text = options.rawText ?? JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  if (options.pauseMidBodyMs) {
    const half = Math.ceil(text.length / 2);
    res.write(text.slice(0, half));
    await delay(options.pauseMidBodyMs, undefined, { signal: options.signal });
    if (!res.destroyed) res.end(text.slice(half));
    return;
  }
  res.end(text);
}

/** GET /v1/analytics/{projectId}/{name}, by name (a Map: no inherited keys such as `constructor`). */
const ANALYTICS_OPERATIONS = new Map<string, FakeOperation>([
  ['visitors', 'visitors'],
  ['feedback', 'feedback'],
  ['searches', 'searches'],
  ['assistant', 'assistant'],
]);

function operationOf(method: string, segments: string[]): FakeOperation | undefined {
  // "/v2/agent/{projectId}/job/{id}/message" splits into ['', 'v2', 'agent', projectId, 'job', id, 'message'].
  const [, version, area, projectId, ...rest] = segments;
  if (!projectId) return undefined;
  // "/v1/project/preview/{projectId}" and "/v1/project/update-status/{statusId}".
  if (version === 'v1' && area === 'project' && rest.length === 1 && rest[0]) {
    if (method === 'POST' && projectId === 'preview') return 'deployPreview';
    if (method === 'GET' && projectId === 'update-status') return 'deploymentStatus';
  }
  if (version === 'v2' && area === 'agent' && rest[0] === 'job') {
    if (method === 'POST' && rest.length === 1) return 'createJob';
    if (method === 'GET' && rest.length === 2 && rest[1]) return 'getJob';
    if (method === 'POST' && rest.length === 3 && rest[1] && rest[2] === 'message') return 'sendMessage';
  }
  if (version !== 'v1' || area !== 'analytics' || method !== 'GET') return undefined;
  // "/v1/analytics/{projectId}/feedback/by-page" has rest ['feedback', 'by-page'].
  if (rest.length === 2 && rest[0] === 'feedback' && rest[1] === 'by-page') return 'feedbackByPage';
  return rest.length === 1 ? ANALYTICS_OPERATIONS.get(rest[0] ?? '') : undefined;
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
