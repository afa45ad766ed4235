/**
 * The subtypes of a message a person wrote, as the doors take them: one with a file, one also sent
 * to the channel, one written with `/me`. Edits, deletions, joins, topics and the like are not.
 */
const SAID: ReadonlySet<string> = new Set(['file_share', 'thread_broadcast', 'me_message']);

type SaidSubtype = undefined | 'file_share' | 'thread_broadcast' | 'me_message';

/**
 * Such a message event, in a thread or not (Slack's type for a `/me` message leaves its thread out);
 * an event of one type only (app_mention) stays as it is.
 */
type Said<E> = [Extract<E, { subtype?: SaidSubtype }>] extends [never]
  ? E
  : Extract<E, { subtype?: SaidSubtype }> & { thread_ts?: string };

/** Whether a message event (one without a subtype: a plain message) is something a person said. */
export function isSaid<E extends { subtype?: string | undefined }>(event: E): event is Said<E> & E {
  return event.subtype === undefined || SAID.has(event.subtype);
}
