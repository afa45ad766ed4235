/**
 * Turns Slack's message markup into readable plain text for the docs agent:
 * `<@U123>` becomes `@Jane`, `<#C1|general>` becomes `#general` (and `<#C1|>`, without its name,
 * `#C1`), `<https://x|label>` becomes `label (https://x)`, and `&amp;`, `&lt;`, `&gt;` are decoded.
 */
export type UserNames = (userId: string) => Promise<string | undefined>;

const TOKEN = /<([^<>]+)>/g;

export async function slackToPlainText(text: string, userName: UserNames): Promise<string> {
  const ids = new Set<string>();
  for (const match of text.matchAll(TOKEN)) {
    const inner = match[1] ?? '';
    if (inner.startsWith('@')) ids.add(inner.slice(1).split('|')[0] ?? '');
  }
  const names = new Map<string, string | undefined>();
  await Promise.all([...ids].map(async (id) => names.set(id, await userName(id).catch(() => undefined))));

  const replaced = text.replace(TOKEN, (_all, inner: string) => {
    const [target = '', label] = splitLabel(inner);
    if (target.startsWith('@')) {
      const id = target.slice(1);
      return `@${names.get(id) ?? label ?? id}`;
    }
    if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
    if (target.startsWith('!')) return specialMention(target.slice(1), label);
    if (target.startsWith('mailto:')) return label ?? target.slice('mailto:'.length);
    return label && label !== target ? `${label} (${target})` : target;
  });
  return decodeEntities(replaced);
}

/** The target and its label; an empty label (Slack writes a channel link as `<#C0123|>`) is none. */
function splitLabel(inner: string): [string, string | undefined] {
  const bar = inner.indexOf('|');
  return bar === -1 ? [inner, undefined] : [inner.slice(0, bar), inner.slice(bar + 1) || undefined];
}

function specialMention(name: string, label: string | undefined): string {
  if (name === 'here' || name === 'channel' || name === 'everyone') return `@${name}`;
  if (name.startsWith('subteam^')) return label ?? '@group';
  if (name.startsWith('date^')) return label ?? '';
  return label ?? `@${name}`;
}

export function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
