/** Who wrote the first message of the thread a reply is in, as Slack's message event names it. */
export function threadParentUser(event: object): string | undefined {
  const { parent_user_id: parent } = event as { parent_user_id?: unknown };
  return typeof parent === 'string' ? parent : undefined;
}
