import type { RespondArguments } from '@slack/bolt';
import { request } from 'undici';

/** What a processor answers a person through: a slash command's response URL. */
export type Respond = (message: RespondArguments) => Promise<void>;

// A response URL that does not answer within this is not worth holding a worker for.
const RESPOND_TIMEOUT_MS = 10_000;

/**
 * Bolt's `respond`, for the worker: the request was acknowledged by the web role (maybe in another
 * process), and its response URL (good for 30 minutes, 5 answers) still reaches the person.
 */
export function respondVia(responseUrl: string): Respond {
  return async (message) => {
    const answer = await request(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(message),
      headersTimeout: RESPOND_TIMEOUT_MS,
      bodyTimeout: RESPOND_TIMEOUT_MS,
    });
    await answer.body.dump();
    if (answer.statusCode >= 300) {
      throw new Error(`the response URL answered HTTP ${answer.statusCode}`);
    }
  };
}
