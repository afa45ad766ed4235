/** Reads a Web API request the way Slack does: form or JSON body, token from the header or the form. */

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

// WebClient sends these as JSON strings inside a form body; Slack parses them back.
const jsonArguments = new Set(['blocks', 'attachments', 'view', 'metadata']);

export interface ApiRequest {
  args: Record<string, unknown>;
  token?: string;
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseApiRequest(
  headers: IncomingHttpHeaders,
  query: URLSearchParams,
  body: string,
): ApiRequest {
  const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1];
  const args: Record<string, unknown> = {};
  for (const [key, value] of query) args[key] = value;
  if ((headers['content-type'] ?? '').includes('application/json')) {
    // Slack takes the token of a JSON request from the Authorization header only.
    Object.assign(args, parseJsonObject(body));
    return { args, token: bearer };
  }
  for (const [key, value] of new URLSearchParams(body)) {
    args[key] = jsonArguments.has(key) ? parseJsonOr(value) : value;
  }
  const formToken = typeof args.token === 'string' ? args.token : undefined;
  delete args.token;
  return { args, token: bearer ?? formToken };
}

export function parseJsonObject(body: string): Record<string, unknown> {
  const parsed = parseJsonOr(body);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
