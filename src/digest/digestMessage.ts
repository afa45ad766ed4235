import type { types } from '@slack/bolt';
import { MESSAGE_BLOCKS_TEXT_MAX, blocksTextLength } from '../slack/blockText.js';
import { escapeSlackText, truncate } from '../slack/escape.js';
import type { SiteTotals, VisitorNumbers } from './collectVisitors.js';
import { addDays } from './period.js';
import type { Struggle, Struggles } from './struggles.js';
import { pagesCutText, struggleLine, strugglesBlocks } from './strugglesMessage.js';
import type { PageVisitors } from './topPages.js';

type KnownBlock = types.KnownBlock;

/**
 * The Block Kit of the weekly digest, and its plain-text fallback (what a notification shows).
 * It knows nothing of HTTP or the store: it is given the numbers and renders them within
 * Slack's limits (50 blocks, 3000 characters a section, 150 a header, and the blocks' text in all).
 */

export interface DigestView {
  numbers: VisitorNumbers;
  timeZone: string;
  /** Last week's numbers: totals when known, and the top pages when last week's digest was kept. */
  previous?:
    | {
        totals?: SiteTotals;
        top?: PageVisitors[];
        /** Last week's top holds every page that had visits then: a page not in it had none. */
        topHoldsAll?: boolean;
      }
    | undefined;
  /** When set, paths link to the docs site. */
  siteUrl?: string | undefined;
  /** "Where readers struggled", when DIGEST_STRUGGLES asks for it. */
  struggles?: Struggles | undefined;
}

export interface DigestMessage {
  text: string;
  blocks: KnownBlock[];
  /**
   * The whole digest as one text with no blocks (so no buttons), posted when Slack will not take the
   * blocks: a limit it does not publish, or a bug of ours. Slack keeps 40,000 characters of a text.
   */
  plain: string;
}

const SECTION_MAX = 3000;
/** Slack's limit on the blocks of one message. */
const MESSAGE_BLOCKS_MAX = 50;
const HEADER_MAX = 150;
/** The notes under the list (pages left out, a partial export, no last week): their text at most. */
const NOTES_TEXT_MAX = 400;
const PATH_SHOWN_MAX = 80;
// A longer link would crowd the other pages out of a section; such a path is shown unlinked.
const LINK_URL_MAX = 500;
const BAR_WIDTH = 10;

const count = new Intl.NumberFormat('en-US');
const n = (value: number) => count.format(value);

export function digestMessage(view: DigestView): DigestMessage {
  const { numbers, timeZone } = view;
  const range = dateRange(numbers.period.dateFrom, numbers.period.dateTo);
  const header: KnownBlock = {
    type: 'header',
    text: {
      type: 'plain_text',
      text: truncate(`Docs digest: ${range} (${timeZone})`, HEADER_MAX),
      emoji: true,
    },
  };
  const when: KnownBlock = context(
    `Unique visitors to the docs over 7 full days, ${range}, as Mintlify dates them.`,
  );

  if (numbers.totals.total === 0 && numbers.top.length === 0) {
    const lastWeek = view.previous?.totals;
    const text = `Docs digest, ${range} (${timeZone}): no visits recorded.`;
    return {
      text,
      plain: plainDigest(view, text, []),
      blocks: [
        header,
        when,
        section(
          `:zzz: *No visits recorded* this week.${lastWeek && lastWeek.total > 0 ? ` Last week: ${n(lastWeek.total)} visitors.` : ''}`,
        ),
        ...(view.struggles ? strugglesBlocks(view.struggles, range) : []),
      ],
    };
  }

  const previous = view.previous;
  const totals = numbers.totals;
  const struggles = view.struggles ? strugglesBlocks(view.struggles, range) : [];
  // Cut at DIGEST_MAX_PAGES, the export held more paths than were read: their count is a floor.
  const notes = [
    `${numbers.complete ? '' : 'at least '}${n(numbers.pathCount)} page${numbers.pathCount === 1 ? '' : 's'} had visits`,
  ];
  const blocks: KnownBlock[] = [
    header,
    when,
    {
      type: 'section',
      fields: [
        totalField('Human visitors', totals.human, previous?.totals?.human),
        totalField('AI visitors', totals.ai, previous?.totals?.ai),
        totalField('All visitors', totals.total, previous?.totals?.total),
      ],
    },
    context(
      '_All visitors_ counts each visitor once, even one seen as both human and AI, so it is not the sum of the two.',
    ),
  ];

  const best = numbers.top[0]?.total ?? 0;
  const lines = numbers.top.map((page, i) =>
    pageLine(i + 1, page, {
      best,
      siteTotal: totals.total,
      previousTop: previous?.top,
      previousTopHoldsAll: previous?.topHoldsAll === true,
      shownTop: numbers.top.length,
      siteUrl: view.siteUrl,
    }),
  );
  if (lines.length > 0) {
    const heading = (count: number) =>
      section(`*${topOf(count)}* by unique visitors  ·  _% is the share of all visitors_`);
    // Slack takes 50 blocks a message, and only so much text in all: the list (after its divider and
    // heading) gives way to the notes and the struggles after it.
    let textRoom =
      MESSAGE_BLOCKS_TEXT_MAX -
      blocksTextLength([...blocks, heading(lines.length), ...struggles]) -
      NOTES_TEXT_MAX;
    const fitting = lines.filter((line) => (textRoom -= line.length + 1) >= 0);
    const room = Math.max(0, MESSAGE_BLOCKS_MAX - blocks.length - 3 - struggles.length);
    const shown = packLines(fitting, SECTION_MAX).slice(0, room);
    const count = shown.reduce((sum, { lines }) => sum + lines, 0);
    if (count > 0) {
      blocks.push({ type: 'divider' }, heading(count), ...shown.map(({ text }) => section(text)));
    }
    if (count < lines.length)
      notes.push(
        lines.length - count === 1
          ? 'the last page did not fit in one message'
          : `the other ${lines.length - count} pages did not fit in one message`,
      );
  }

  if (!numbers.complete) {
    notes.push(
      `:warning: ranked from the first ${n(numbers.pathCount)} paths of Mintlify’s export only (DIGEST_MAX_PAGES stopped the read after ${n(numbers.pagesRead)} requests); the site has more paths`,
    );
  }
  if (!previous?.totals) notes.push('no numbers from last week to compare with');
  blocks.push(context(notes.join('  ·  ')), ...struggles);

  const text = fallbackText(view, range);
  return { text, blocks, plain: plainDigest(view, text, lines) };
}

/** Slack keeps 40,000 characters of a message's text and cuts the rest: the plain digest ends before. */
const PLAIN_MAX = 38_000;

function plainDigest(view: DigestView, text: string, pageLines: string[]): string {
  const { struggles } = view;
  const items = struggles ? [...struggles.pages, ...struggles.searches, ...struggles.questions] : [];
  const parts = [text];
  if (pageLines.length > 0) parts.push(`*${topOf(pageLines.length)}* by unique visitors`, ...pageLines);
  if (items.length > 0) {
    // Readers' words, escaped: in a text they could otherwise mention or link, or (its markup made
    // inert) turn bold, strike through, or open a code block that swallows the rest of the digest.
    const line = (item: Struggle) =>
      escapeSlackText(
        // A page's path is Mintlify's, and copied into an instruction: shown as it is.
        struggleLine(item.kind === 'page' ? item : { ...item, subject: inertMarkup(item.subject) }),
      );
    parts.push('*Where readers struggled*', ...items.map(line));
  }
  if (struggles?.pagesCut && !struggles.unread.includes('page')) {
    if (items.length === 0) parts.push('*Where readers struggled*');
    parts.push(pagesCutText(struggles.pages.length > 0));
  }
  parts.push(
    items.length > 0
      ? '_Slack did not take this digest as laid out, so it is shown as text, without its “Fix with the docs agent” buttons: start a job with /docs-agent instead._'
      : '_Slack did not take this digest as laid out, so it is shown as text._',
  );
  return truncate(parts.join('\n'), PLAIN_MAX);
}

/**
 * Slack's mrkdwn has no escape for its formatting marks: in readers' words shown as mrkdwn text, each
 * is replaced by a character that looks alike and formats nothing (∗ ˍ ∼ ˋ), so the words read as typed.
 */
const INERT: Record<string, string> = { '*': '\u2217', _: '\u02cd', '~': '\u223c', '`': '\u02cb' };
function inertMarkup(text: string): string {
  return text.replace(/[*_~`]/g, (mark) => INERT[mark] ?? mark);
}

function fallbackText(view: DigestView, range: string): string {
  const { totals, top } = view.numbers;
  const change = changeText(totals.total, view.previous?.totals?.total);
  const first = top[0];
  return [
    `Docs digest, ${range} (${view.timeZone}): ${n(totals.total)} visitors (${n(totals.human)} human, ${n(totals.ai)} AI)${change ? `, ${sinceLastWeek(change)}` : ''}.`,
    first ? ` Top page: ${escapeSlackText(shortPath(first.path))} (${n(first.total)}).` : '',
  ].join('');
}

function totalField(label: string, value: number, previous: number | undefined): types.MrkdwnElement {
  const change = changeText(value, previous);
  return { type: 'mrkdwn', text: `*${label}*\n${n(value)}${change ? `  ${sinceLastWeek(change)}` : ''}` };
}

interface LineContext {
  best: number;
  siteTotal: number;
  previousTop: PageVisitors[] | undefined;
  previousTopHoldsAll: boolean;
  /** How many pages this week's top lists. */
  shownTop: number;
  siteUrl: string | undefined;
}

function pageLine(rank: number, page: PageVisitors, ctx: LineContext): string {
  const share = ctx.siteTotal > 0 ? ` ${Math.round((page.total / ctx.siteTotal) * 100)}%` : '';
  const parts = [
    `\`${bar(page.total, ctx.best)}\`${share}`,
    `*${n(page.total)}* (${n(page.human)} human, ${n(page.ai)} AI)`,
  ];
  if (ctx.previousTop) {
    const before = ctx.previousTop.find((entry) => entry.path === page.path);
    if (before) parts.push(changeText(page.total, before.total) || 'no change');
    // Not in last week's list: new in this week's top only if that list was as long as this one (a
    // DIGEST_TOP raised since lists more pages now), or held every page with visits. Else nothing is said.
    else if (ctx.previousTopHoldsAll || ctx.previousTop.length >= ctx.shownTop)
      parts.push('new in the top pages');
  }
  return `*${rank}.* ${pageLabel(page.path, ctx.siteUrl)}\n${parts.join('  ·  ')}`;
}

/** `Top page`, `Top 10 pages`. */
const topOf = (count: number) => (count === 1 ? 'Top page' : `Top ${n(count)} pages`);

/** `↑ 12% from last week`; `up from 0 last week` rather than "up from 0 from last week". */
const sinceLastWeek = (change: string) =>
  change === UP_FROM_ZERO ? `${change} last week` : `${change} from last week`;

/** A bar as long as the page's visitors are next to the first page's. */
export function bar(value: number, best: number): string {
  const filled = best > 0 ? Math.round((value / best) * BAR_WIDTH) : 0;
  const shown = Math.max(value > 0 ? 1 : 0, Math.min(BAR_WIDTH, filled));
  return `${'█'.repeat(shown)}${'░'.repeat(BAR_WIDTH - shown)}`;
}

const UP_FROM_ZERO = 'up from 0';

/** `↑ 12%`, `↓ 5%`, `no change`, `up from 0`; empty when there is nothing to compare with. */
export function changeText(value: number, previous: number | undefined): string {
  if (previous === undefined) return '';
  if (previous === 0) return value === 0 ? 'no change' : UP_FROM_ZERO;
  const percent = Math.round(((value - previous) / previous) * 100);
  if (percent === 0) return value === previous ? 'no change' : value > previous ? '↑ &lt;1%' : '↓ &lt;1%';
  return percent > 0 ? `↑ ${count.format(percent)}%` : `↓ ${count.format(-percent)}%`;
}

/** Long paths keep their start and their end, which is where a page's name usually is. */
export function shortPath(path: string, max = PATH_SHOWN_MAX): string {
  const chars = [...path];
  if (chars.length <= max) return path;
  const head = Math.ceil((max - 1) * 0.4);
  const tail = max - 1 - head;
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - tail).join('')}`;
}

function pageLabel(path: string, siteUrl: string | undefined): string {
  const label = escapeSlackText(shortPath(path));
  if (!siteUrl) return label;
  const url = pageUrl(siteUrl, path);
  return url.length <= LINK_URL_MAX ? `<${url}|${label}>` : label;
}

/** The page's address on the docs site, made safe inside a Slack `<url|label>` link. */
export function pageUrl(siteUrl: string, path: string): string {
  const absolute = path.startsWith('/') ? path : `/${path}`;
  // Percent-encode what a URL cannot hold as is (spaces, |, <, >, non-ASCII), leaving %XX alone.
  const encoded = absolute.replace(/[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu, (c) => encodeURIComponent(c));
  return `${siteUrl}${encoded}`.replace(/&/g, '&amp;');
}

/** Joins lines into as few texts as fit `max` characters each; a line never spans two. */
function packLines(lines: string[], max: number): Array<{ text: string; lines: number }> {
  const texts: Array<{ text: string; lines: number }> = [];
  let current = { text: '', lines: 0 };
  for (const line of lines) {
    const next = current.lines === 0 ? line : `${current.text}\n${line}`;
    if (next.length <= max) {
      current = { text: next, lines: current.lines + 1 };
    } else {
      if (current.lines > 0) texts.push(current);
      current = { text: truncate(line, max), lines: 1 };
    }
  }
  if (current.lines > 0) texts.push(current);
  return texts;
}

// Paths as readers' visits gave them: Slack parses no `@channel` or bare link in them (ours are marked up).
const section = (text: string): KnownBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: truncate(text, SECTION_MAX), verbatim: true },
});

const context = (text: string): KnownBlock => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: truncate(text, SECTION_MAX), verbatim: true }],
});

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `3–9 Mar 2025`, `24 Feb – 2 Mar 2025`, `29 Dec 2025 – 4 Jan 2026`: the last day is the one before dateTo. */
export function dateRange(dateFrom: string, dateToExclusive: string): string {
  const [fromYear, fromMonth, fromDay] = dateFrom.split('-').map(Number) as [number, number, number];
  const [toYear, toMonth, toDay] = addDays(dateToExclusive, -1).split('-').map(Number) as [
    number,
    number,
    number,
  ];
  const to = `${toDay} ${MONTHS[toMonth - 1]} ${toYear}`;
  if (fromYear !== toYear) return `${fromDay} ${MONTHS[fromMonth - 1]} ${fromYear} – ${to}`;
  if (fromMonth !== toMonth) return `${fromDay} ${MONTHS[fromMonth - 1]} – ${to}`;
  return `${fromDay}–${to}`;
}
