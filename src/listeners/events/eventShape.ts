import type { App } from '@slack/bolt';

/**
 * Events reach the doors only in the shape the doors read: of a type some door handles, with the
 * fields they use present and of the right kind. Anything else is dropped with a log line (Bolt
 * has acknowledged it already), so a malformed payload can never throw inside a door.
 */

// The fields each door cannot do without.
const REQUIRED: Record<string, readonly string[]> = {
  message: ['channel', 'ts'],
  app_mention: ['channel', 'ts', 'text'],
  app_home_opened: ['user'],
};
// Fields the doors read as text whenever they are there.
const TEXT_FIELDS = [
  'channel',
  'ts',
  'user',
  'text',
  'thread_ts',
  'subtype',
  'bot_id',
  'channel_type',
  'tab',
];

export function registerEventShape(app: App): void {
  app.use(async ({ body, logger, next }) => {
    if ((body as { type?: unknown }).type !== 'event_callback') return next();
    const event = (body as { event?: unknown }).event;
    const problem = shapeProblem(event);
    if (problem) {
      logger.warn(`ignored a Slack event: ${problem}`);
      return;
    }
    const { type } = event as { type: string };
    if (!(type in REQUIRED)) {
      logger.debug(`ignored a Slack event of type ${JSON.stringify(type.slice(0, 60))}: no door takes it`);
      return;
    }
    await next();
  });
}

function shapeProblem(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return 'it carries no event';
  const fields = event as Record<string, unknown>;
  if (typeof fields.type !== 'string') return 'it has no type';
  const missing = (REQUIRED[fields.type] ?? []).filter((field) => fields[field] === undefined);
  if (missing.length > 0) return `a ${fields.type} without ${missing.join(', ')}`;
  const wrong = TEXT_FIELDS.filter(
    (field) => fields[field] !== undefined && typeof fields[field] !== 'string',
  );
  if (wrong.length > 0)
    return `a ${fields.type} whose ${wrong.join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not text`;
  return undefined;
}
