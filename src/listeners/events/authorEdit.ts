/** A message as a message_changed event carries it: as it reads now. */
export interface ChangedMessage {
  ts: string;
  thread_ts?: string;
  user: string;
  text: string;
  files?: Array<{ name?: string | null; title?: string | null }>;
  attachments?: unknown;
  parent_user_id?: string;
  edited: { ts: string };
}

/**
 * The message a message_changed event carries, when its author edited it: Slack's own changes (a
 * link preview added) carry no `edited`, and a bot's messages (the bot's own among them) are none of
 * a listener's business.
 */
export function authorEdit(event: { message?: unknown }): ChangedMessage | undefined {
  const changed = (event.message ?? {}) as Partial<ChangedMessage> & { bot_id?: string };
  if (!changed.edited?.ts || changed.bot_id || !changed.user || !changed.ts) return undefined;
  if (typeof changed.text !== 'string') return undefined;
  return changed as ChangedMessage;
}
