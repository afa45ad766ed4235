/** How Slack words its answers: `{ ok: true, ... }` or `{ ok: false, error, ... }`, always HTTP 200. */

import { blockProblems, blocksText, messageBlockLimit, messageBlocksTextLimit } from './blockKitLimits.js';
import type { Workspace } from './workspace.js';

export type Json = Record<string, unknown>;
export type Answer = Json & { ok: boolean };

export interface SlackMethod {
  /** Scopes of which the token needs at least one; absent when any token will do. */
  scopes?: (args: Json) => string[];
  answer: (args: Json, workspace: Workspace) => Answer;
}

export function fail(error: string, extra: Json = {}): Answer {
  return { ok: false, error, ...extra };
}

/** Slack's answer when a required argument is absent and the method has no more specific error. */
export function missingArgument(name: string): Answer {
  return fail('invalid_arguments', {
    response_metadata: { messages: [`[ERROR] missing required field: ${name}`] },
  });
}

export function withProblems(error: string, problems: string[]): Answer {
  return fail(error, {
    errors: problems,
    response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) },
  });
}

/** A non-empty string argument, or undefined. */
export function stringArg(args: Json, key: string): string | undefined {
  const value = args[key];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

// Slack truncates message text beyond 40,000 characters rather than refusing it.
export const maxMessageText = 40_000;

/** Why Slack would refuse a message's content (blocks over a limit, nothing to show), if it would. */
export function contentProblem(args: Json): Answer | undefined {
  const { text, blocks, attachments } = args;
  if (blocks !== undefined) {
    // WebClient sends blocks as a JSON string; one the fake could not parse back is malformed.
    if (!Array.isArray(blocks)) return fail('invalid_blocks_format');
    const problems = blockProblems(blocks, '/blocks', messageBlockLimit);
    if (problems.length > 0) return withProblems('invalid_blocks', problems);
    if (blocksText(blocks) > messageBlocksTextLimit) return fail('msg_blocks_too_long');
  }
  const hasText = typeof text === 'string' && text !== '';
  const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
  const hasAttachments = Array.isArray(attachments) && attachments.length > 0;
  if (!hasText && !hasBlocks && !hasAttachments) return fail('no_text');
  return undefined;
}

/** The fields of a message that a post or an update stores, as Slack would keep them. */
export function messageContent(args: Json): Json {
  const content: Json = {};
  if (typeof args.text === 'string') content.text = args.text.slice(0, maxMessageText);
  for (const key of ['blocks', 'attachments', 'metadata'] as const) {
    if (args[key] !== undefined) content[key] = args[key];
  }
  return content;
}
