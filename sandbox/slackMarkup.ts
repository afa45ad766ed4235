import { decodeEntities } from '../src/slack/plainText.js';
import type { Style } from './terminal.js';

/**
 * Slack's mrkdwn as a terminal shows it: `<@U0ADA>` is `@ada`, `<url|label>` is `label (url)`,
 * `<!date^…>` is a time in this machine's zone, `*bold*` is bold (or plain when piped), `>` quotes
 * get a bar, and the emoji the bot uses are drawn.
 */

export interface MarkupContext {
  style: Style;
  now: () => Date;
  userName(id: string): string | undefined;
  channelName(id: string): string | undefined;
  /** A shorter name for a link this terminal can show better, e.g. a thread link as `#1`. */
  linkName?(url: string): string | undefined;
}

const EMOJI: Record<string, string> = {
  hourglass_flowing_sand: '⏳',
  hourglass: '⌛',
  white_check_mark: '✅',
  heavy_check_mark: '✔️',
  x: '❌',
  grey_question: '❔',
  file_cabinet: '🗄️',
  warning: '⚠️',
  zzz: '💤',
  wave: '👋',
  tada: '🎉',
  memo: '📝',
  books: '📚',
  bar_chart: '📊',
  chart_with_upwards_trend: '📈',
  eyes: '👀',
  robot_face: '🤖',
  bulb: '💡',
  link: '🔗',
  mag: '🔍',
};

export function emoji(text: string): string {
  return text.replace(/:([a-z0-9_+-]+):/g, (all, name: string) => EMOJI[name] ?? all);
}

// A private-use character cannot come from Slack text, so it safely marks where a token was.
const SLOT = '\uE000';

export function markupToTerminal(text: string, ctx: MarkupContext): string {
  const tokens: string[] = [];
  const keep = (rendered: string) => `${SLOT}${tokens.push(rendered) - 1}${SLOT}`;

  let out = text.replace(/<([^<>]+)>/g, (_all, inner: string) => keep(token(inner, ctx)));
  out = out
    .split('\n')
    .map((line) => line.replace(/^>\s?/, `${ctx.style.dim('│')} `))
    .join('\n');
  out = out
    .replace(/`([^`\n]+)`/g, (_all, code: string) => keep(ctx.style.code(decodeEntities(code))))
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, (_all, before: string, inner: string) =>
      before.concat(ctx.style.bold(inner)),
    )
    .replace(/(^|[^\w_])_(?=\S)([^_\n]*?\S)_(?!\w)/g, (_all, before: string, inner: string) =>
      before.concat(ctx.style.italic(inner)),
    )
    .replace(/(^|[^\w~])~(?=\S)([^~\n]*?\S)~(?!\w)/g, (_all, before: string, inner: string) =>
      before.concat(ctx.style.strike(inner)),
    );
  out = decodeEntities(emoji(out));
  // A code span may hold a token: put back the outer ones, then the ones they held.
  const slot = new RegExp(`${SLOT}(\\d+)${SLOT}`, 'g');
  for (let depth = 0; depth < 3 && out.includes(SLOT); depth += 1) {
    out = out.replace(slot, (_all, i: string) => tokens[Number(i)] ?? '');
  }
  return out;
}

function token(inner: string, ctx: MarkupContext): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : decodeEntities(inner.slice(bar + 1));
  if (target.startsWith('@')) {
    const id = target.slice(1);
    return `@${ctx.userName(id) ?? label ?? id}`;
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    return `#${label ?? ctx.channelName(id) ?? id}`;
  }
  if (target.startsWith('!date^')) return slackDateText(target, label, ctx.now());
  if (target.startsWith('!subteam^')) return label ?? '@group';
  if (target.startsWith('!')) return `@${target.slice(1)}`;
  const url = decodeEntities(target);
  if (url.startsWith('mailto:')) return label ?? url.slice('mailto:'.length);
  const shown = ctx.linkName?.(url) ?? url;
  return label && label !== url ? `${label} (${shown})` : shown;
}

/** `!date^<seconds>^<format>[^<link>]`, with Slack's format tokens, read in this machine's zone. */
function slackDateText(target: string, fallback: string | undefined, now: Date): string {
  const [, seconds = '', format = ''] = target.split('^');
  const at = new Date(Number(seconds) * 1000);
  if (Number.isNaN(at.getTime())) return fallback ?? '';
  return format.replace(/\{(\w+)\}/g, (all, name: string) => dateToken(name, at, now) ?? all);
}

function dateToken(name: string, at: Date, now: Date): string | undefined {
  const day = (options: Intl.DateTimeFormatOptions) => at.toLocaleDateString('en-US', options);
  const pretty = (plain: string) => relativeDay(at, now) ?? plain;
  const short = day({ month: 'short', day: 'numeric', year: 'numeric' });
  const long = day({ month: 'long', day: 'numeric', year: 'numeric' });
  const longest = day({ weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' });
  switch (name) {
    case 'ago':
      return ago(at, now);
    case 'time':
      return at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
    case 'time_secs':
      return at.toLocaleTimeString('en-GB');
    case 'date_num':
      return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
    case 'date_short':
      return short;
    case 'date':
      return long;
    case 'date_long':
      return longest;
    case 'date_short_pretty':
      return pretty(short);
    case 'date_pretty':
      return pretty(long);
    case 'date_long_pretty':
      return pretty(longest);
    default:
      return undefined;
  }
}

function ago(at: Date, now: Date): string {
  const seconds = Math.round((now.getTime() - at.getTime()) / 1000);
  const future = seconds < 0;
  const span = Math.abs(seconds);
  if (span < 60) return 'just now';
  const [amount, unit] =
    span < 3600
      ? [Math.round(span / 60), 'minute']
      : span < 86_400
        ? [Math.round(span / 3600), 'hour']
        : [Math.round(span / 86_400), 'day'];
  const words = `${amount} ${unit}${amount === 1 ? '' : 's'}`;
  return future ? `in ${words}` : `${words} ago`;
}

function relativeDay(at: Date, now: Date): string | undefined {
  const midnight = (date: Date) => new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
  const days = Math.round((midnight(at) - midnight(now)) / 86_400_000);
  return days === 0 ? 'today' : days === -1 ? 'yesterday' : days === 1 ? 'tomorrow' : undefined;
}

const pad = (value: number) => String(value).padStart(2, '0');
