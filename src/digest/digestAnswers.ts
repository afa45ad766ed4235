import { isMintlifyError } from '../mintlify/index.js';
import { escapeSlackText, slackDate } from '../slack/escape.js';
import { messageLink } from '../slack/links.js';
import { classifySlackError, slackErrorCode } from '../slack/slackErrors.js';
import { DigestGaveUpError } from './collectVisitors.js';
import { ASKED_KEEP_MS } from './digestRecords.js';
import type { DigestRequestOutcome } from './postDigest.js';

/**
 * What a person who typed `/docs-agent digest` is told, in plain words, when the digest could not
 * be posted. Never the key, never a stack trace; always what to do next.
 */

/**
 * Slack failed as the digest was posted (a 5xx, a cut connection), and the channel could not be read
 * to see whether it stored it all the same: it is not posted again, which could post it twice.
 */
export class MaybePostedError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly lookError: unknown,
  ) {
    super(`Slack may have stored the digest: ${String(cause)}`);
    this.name = 'MaybePostedError';
  }
}

const MAYBE_POSTED_TEXT =
  'Slack failed as I posted the digest, and I couldn’t check whether it arrived anyway. If it is not in this channel, please try again in a few minutes.';

/**
 * Why the digest was not posted (`text`), and what the person should do next: ask again (the text
 * says when), sort something out first (the text says what), or look for it in the channel first.
 */
export interface DigestFailure {
  text: string;
  next: 'ask_again' | 'sort_out_first' | 'look_first';
}

const askAgain = (text: string): DigestFailure => ({ text, next: 'ask_again' });
const sortOutFirst = (text: string): DigestFailure => ({ text, next: 'sort_out_first' });

export const STOPPED: DigestFailure = askAgain(
  'I was restarted before the digest was ready. Please try again in a minute.',
);
export const STOPPED_TEXT = STOPPED.text;

export function digestFailure(error: unknown, now: Date): DigestFailure {
  if (error instanceof MaybePostedError) return { text: MAYBE_POSTED_TEXT, next: 'look_first' };
  if (error instanceof DigestGaveUpError) {
    const again =
      error.retryAfterMs === undefined
        ? 'Please try again within the hour.'
        : `Please try again after ${slackDate(new Date(now.getTime() + error.retryAfterMs), '{time}')}.`;
    return askAgain(
      `Mintlify’s analytics limit (100 requests an hour, shared by the whole organization) is reached, so I couldn’t gather the visitor numbers in time. ${again}`,
    );
  }
  if (isMintlifyError(error)) {
    switch (error.kind) {
      case 'rate_limited':
        return askAgain(
          'Mintlify’s analytics limit (100 requests an hour, shared by the whole organization) is reached. Please try again within the hour.',
        );
      case 'unauthorized':
      case 'forbidden':
        return sortOutFirst(
          'Mintlify refused the bot’s request for visitor numbers (its API key is wrong or expired, the docs project is not the key’s, the key lacks the read scope, or this server is not on the key’s allowlist). Please ask the person who installed this app to check the key and the project ID.',
        );
      case 'not_found':
        return sortOutFirst(
          'Mintlify could not find the docs project. Please ask the person who installed this app to check MINTLIFY_PROJECT_ID.',
        );
      case 'invalid_request':
        return sortOutFirst(
          `Mintlify did not accept the request for visitor numbers${error.serviceMessage ? ` (${escapeSlackText(error.serviceMessage)})` : ''}. Please let the person who installed this app know.`,
        );
      case 'redirected':
        return sortOutFirst(
          'The address this app has for Mintlify’s API sends requests elsewhere, so there is no digest. Please ask the person who installed this app to check MINTLIFY_API_URL.',
        );
      default:
        return askAgain(
          'Mintlify’s analytics did not answer properly, so there is no digest this time. Please try again in a few minutes.',
        );
    }
  }
  // Slack answers channel_not_found for a private channel the bot is not in, and for a DM between people.
  if (slackErrorCode(error) === 'channel_not_found') {
    return askAgain(
      'I can’t post the digest here because I’m not a member of this conversation. In a private channel, invite me with `/invite @docs-agent` and try again; in a DM between people, ask in a channel I’m in.',
    );
  }
  switch (classifySlackError(error)) {
    case 'not_in_channel':
      return askAgain(
        'I can’t post the digest here because I’m not a member of this channel. Invite me with `/invite @docs-agent` and try again.',
      );
    case 'channel_gone':
      return sortOutFirst('I can’t post in this channel: it is archived, or posting in it is restricted.');
    default:
      return askAgain(
        'Sorry, something went wrong on my side while preparing the digest. Please try again shortly.',
      );
  }
}

/** The answer to `/docs-agent digest` once it is done; undefined when the digest is in the channel. */
export function digestRequestAnswer(outcome: DigestRequestOutcome): string | undefined {
  switch (outcome.kind) {
    case 'posted':
    case 'already_posted':
      return undefined;
    case 'in_progress':
      return ALREADY_RUNNING_TEXT;
    case 'waiting':
      return undefined; // told already (ALREADY_RUNNING_TEXT), and told again by the one preparing it
    case 'own_run_elsewhere':
      return undefined; // the run of the same request that holds it answers
    case 'busy_elsewhere':
      return BUSY_ELSEWHERE_TEXT;
    case 'posted_recently': {
      const { record } = outcome;
      const postedAt = new Date(record.postedAt);
      const again = new Date(postedAt.getTime() + ASKED_KEEP_MS);
      return `The digest of the last 7 days was posted in this channel ${slackDate(postedAt, '{ago}')}: <${messageLink(record.channel, record.ts)}|see it>. Ask again after ${slackDate(again)} to have it posted anew.`;
    }
    case 'failed':
      return outcome.text;
  }
}

/**
 * What the people told that the channel's digest "will appear here shortly" hear when the request
 * preparing it ends: the reason its asker got, and to ask again. Undefined when it is in the channel.
 */
export function promisedDigestAnswer(outcome: DigestRequestOutcome): string | undefined {
  switch (outcome.kind) {
    case 'posted':
    case 'already_posted':
      return undefined;
    case 'posted_recently':
      // Posted within the hour: the one they were promised is that one.
      return digestRequestAnswer(outcome);
    case 'busy_elsewhere':
      return `${NOT_COMING_TEXT} ${BUSY_ELSEWHERE_TEXT}`;
    case 'failed':
      return promisedFailureAnswer(outcome);
    case 'in_progress':
    case 'waiting':
    case 'own_run_elsewhere':
      // Another run's to answer: not the end of one.
      return undefined;
  }
}

function promisedFailureAnswer(failure: DigestFailure): string {
  switch (failure.next) {
    case 'look_first':
      // It may be in the channel already: not told it will not come.
      return MAYBE_POSTED_PROMISED_TEXT;
    case 'ask_again':
      return `${NOT_COMING_TEXT} ${failure.text}`;
    case 'sort_out_first':
      return `${NOT_COMING_TEXT} ${failure.text} Once that is sorted out, ask for it again with \`/docs-agent digest\`.`;
  }
}

const NOT_COMING_TEXT = 'The digest being prepared for this channel will not be posted after all.';
const MAYBE_POSTED_PROMISED_TEXT =
  'Slack failed as I posted the digest being prepared for this channel, and I couldn’t check whether it arrived: it may be here already. Look for it in this channel before asking again with `/docs-agent digest`.';

const BUSY_ELSEWHERE_TEXT =
  'Another digest is being prepared right now, and digests share Mintlify’s analytics limit: try again in a few minutes.';
export const ALREADY_RUNNING_TEXT =
  'A digest for this channel is already being prepared; it will appear here shortly.';

export function rateLimitWaitText(waitMs: number, now: Date): string {
  const at = new Date(now.getTime() + waitMs);
  return `:hourglass_flowing_sand: Mintlify’s analytics limit is reached for now. I’ll post the digest here once it frees up, around ${slackDate(at, '{time}')}.`;
}
