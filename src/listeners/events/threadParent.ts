/**
 * Who wrote the first message of the thread a reply is in, as Slack's message event names it: in
 * `parent_user_id`, or, for a reply also sent to the channel (`thread_broadcast`), which has none,
 * in the thread's first message it carries as `root`.
 */
export function threadParentUser(event: object): string | undefined {
  const { parent_user_id: parent, root } = event as { parent_user_id?: unknown; root?: unknown };
  if (typeof parent === 'string') return parent;
  const rootUser = typeof root === 'object' && root !== null ? (root as { user?: unknown }).user : undefined;
  return typeof rootUser === 'string' ? rootUser : undefined;
}
