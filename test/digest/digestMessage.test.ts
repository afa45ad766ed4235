import {
  parseStruggleValue,
  strugglesBlocks,
  suggestedInstruction,
} from '../../src/digest/strugglesMessage.js';
import type { Struggle, StruggleKind, Struggles } from '../../src/digest/struggles.js';
import { describe, expect, it } from 'vitest';
import type { VisitorNumbers } from '../../src/digest/collectVisitors.js';
import { changeText, dateRange, digestMessage, pageUrl, shortPath } from '../../src/digest/digestMessage.js';
import type { PageVisitors } from '../../src/digest/topPages.js';
import { MESSAGE_BLOCKS_TEXT_MAX } from '../../src/slack/blockText.js';
import { blockProblems, blocksText, messageBlockLimit } from '../fakes/slack/blockKitLimits.js';

const period = { dateFrom: '2025-03-10', dateTo: '2025-03-17' };

function numbers(top: PageVisitors[], totals = { human: 900, ai: 300, total: 1_100 }): VisitorNumbers {
  return { period, totals, top, pathCount: top.length, pagesRead: 1, complete: true };
}

const pages: PageVisitors[] = [
  { path: '/quickstart', human: 400, ai: 120, total: 500 },
  { path: '/api-reference/jobs', human: 200, ai: 60, total: 250 },
  { path: '/changelog', human: 10, ai: 0, total: 10 },
];

const allText = (message: { blocks: unknown[] }) => JSON.stringify(message.blocks);

describe('the digest message', () => {
  it('shows the period and time zone, the three totals, and the pages ranked with a bar and share', () => {
    const message = digestMessage({ numbers: numbers(pages), timeZone: 'Europe/Paris' });

    expect(message.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Docs digest: 10–16 Mar 2025 (Europe/Paris)', emoji: true },
    });
    const text = allText(message);
    expect(text).toContain('*Human visitors*\\n900');
    expect(text).toContain('*AI visitors*\\n300');
    expect(text).toContain('*All visitors*\\n1,100');
    expect(text).toContain('counts each visitor once');
    expect(text).toContain('*1.* /quickstart\\n`██████████` 45%  ·  *500* (400 human, 120 AI)');
    expect(text).toContain('*2.* /api-reference/jobs\\n`█████░░░░░` 23%  ·  *250* (200 human, 60 AI)');
    expect(text).toContain('*3.* /changelog\\n`█░░░░░░░░░` 1%');
    expect(text).toContain('3 pages had visits  ·  no numbers from last week to compare with');
    expect(message.text).toBe(
      'Docs digest, 10–16 Mar 2025 (Europe/Paris): 1,100 visitors (900 human, 300 AI). Top page: /quickstart (500).',
    );
  });

  it('shows the change from last week for the totals and for the pages that were in last week’s top', () => {
    const message = digestMessage({
      numbers: numbers(pages),
      timeZone: 'UTC',
      previous: {
        totals: { human: 1_000, ai: 300, total: 1_000 },
        top: [
          { path: '/quickstart', human: 300, ai: 100, total: 400 },
          { path: '/api-reference/jobs', human: 250, ai: 50, total: 250 },
        ],
        topHoldsAll: true,
      },
    });

    const text = allText(message);
    expect(text).toContain('*Human visitors*\\n900  ↓ 10% from last week');
    expect(text).toContain('*AI visitors*\\n300  no change from last week');
    expect(text).toContain('*All visitors*\\n1,100  ↑ 10% from last week');
    expect(text).toContain('(400 human, 120 AI)  ·  ↑ 25%');
    expect(text).toContain('(200 human, 60 AI)  ·  no change');
    expect(text).toContain('(10 human, 0 AI)  ·  new in the top pages');
    expect(text).not.toContain('no numbers from last week');
    expect(message.text).toContain('1,100 visitors (900 human, 300 AI), ↑ 10% from last week.');
  });

  it('calls a page new in the top pages only when last week’s list shows it was not in it', () => {
    const lastWeek = (top: PageVisitors[], topHoldsAll = false) =>
      allText(
        digestMessage({
          numbers: numbers(pages),
          timeZone: 'UTC',
          previous: { totals: { human: 1_000, ai: 300, total: 1_000 }, top, topHoldsAll },
        }),
      );
    const two = pages.slice(0, 2);
    // Last week listed 2 pages (a smaller DIGEST_TOP) of more: /changelog may have been third.
    expect(lastWeek(two)).toMatch(/\(10 human, 0 AI\)(?! {2}·)/);
    expect(lastWeek(two)).not.toContain('new in the top pages');
    // As long a list as this week's, or every page with visits: it was not in it.
    const other = { path: '/other', human: 1, ai: 0, total: 1 };
    expect(lastWeek([...two, other])).toContain('(10 human, 0 AI)  ·  new in the top pages');
    expect(lastWeek(two, true)).toContain('(10 human, 0 AI)  ·  new in the top pages');
  });

  it('words one page, and a rise from none last week, in plain English', () => {
    const message = digestMessage({
      numbers: { ...numbers(pages.slice(0, 1), { human: 400, ai: 120, total: 500 }), pathCount: 1 },
      timeZone: 'UTC',
      previous: { totals: { human: 0, ai: 0, total: 0 } },
    });
    const text = allText(message);
    expect(text).toContain('*Top page* by unique visitors');
    expect(text).toContain('1 page had visits');
    expect(text).toContain('*Human visitors*\\n400  up from 0 last week');
    expect(message.text).toContain('500 visitors (400 human, 120 AI), up from 0 last week.');
    expect(message.plain).toContain('*Top page* by unique visitors');
    for (const said of [text, message.text, message.plain]) {
      expect(said).not.toContain('Top 1 pages');
      expect(said).not.toContain('up from 0 from last week');
    }
  });

  it('links paths to the docs site when DOCS_SITE_URL is set', () => {
    const message = digestMessage({
      numbers: numbers([{ path: '/a b|c&d', human: 1, ai: 0, total: 1 }]),
      timeZone: 'UTC',
      siteUrl: 'https://docs.acme.com',
    });

    expect(allText(message)).toContain('<https://docs.acme.com/a%20b%7Cc&amp;d|/a b|c&amp;d>');
  });

  it('an empty week posts a short "no visits recorded" digest', () => {
    const message = digestMessage({
      numbers: { ...numbers([], { human: 0, ai: 0, total: 0 }), pathCount: 0 },
      timeZone: 'UTC',
      previous: { totals: { human: 5, ai: 1, total: 6 } },
    });

    expect(message.text).toBe('Docs digest, 10–16 Mar 2025 (UTC): no visits recorded.');
    expect(message.blocks).toHaveLength(3);
    expect(allText(message)).toContain('*No visits recorded* this week. Last week: 6 visitors.');
  });

  it('a week with visitors but no page ranked is no empty week: the totals are shown', () => {
    const message = digestMessage({
      numbers: { ...numbers([], { human: 5, ai: 1, total: 6 }), pathCount: 0 },
      timeZone: 'UTC',
    });

    expect(message.text).toBe('Docs digest, 10–16 Mar 2025 (UTC): 6 visitors (5 human, 1 AI).');
    expect(allText(message)).not.toContain('No visits recorded');
    expect(allText(message)).toContain('*All visitors*\\n6');
  });

  it('stays within Slack’s Block Kit limits with 40 very long paths, and escapes them', () => {
    const long = Array.from({ length: 40 }, (_, i) => ({
      path: `/${'deeply-nested-section/'.repeat(200)}<!channel>-page-${i}`,
      human: 1_000 - i,
      ai: i,
      total: 1_000 - i,
    }));
    for (const siteUrl of [undefined, 'https://docs.acme.com']) {
      const message = digestMessage({
        numbers: { ...numbers(long), complete: false, pagesRead: 1_000, pathCount: 250_000 },
        timeZone: 'America/Argentina/ComodRivadavia',
        siteUrl,
      });

      expect(blockProblems(message.blocks, '/blocks', messageBlockLimit)).toEqual([]);
      expect(allText(message)).not.toContain('<!channel>');
      expect(allText(message)).toContain('&lt;!channel&gt;-page-39');
      // The notification's text names the top page too: escaped, it pings nobody.
      expect(message.text).not.toContain('<!channel>');
      expect(message.text).toContain('&lt;!channel&gt;-page-0 (1,000)');
      expect(allText(message)).toContain('*40.*');
      expect(allText(message)).toContain(
        'ranked from the first 250,000 paths of Mintlify’s export only (DIGEST_MAX_PAGES stopped the read after 1,000 requests)',
      );
      expect(message.text.length).toBeLessThan(400);
    }
  });

  it('does not state the paths read so far as the number of pages that had visits when the export was cut at DIGEST_MAX_PAGES', () => {
    const message = digestMessage({
      numbers: { ...numbers(pages), complete: false, pagesRead: 4, pathCount: 1_000 },
      timeZone: 'UTC',
    });
    // The site has more paths than the 1,000 read: "1,000 pages had visits" is not so.
    expect(allText(message)).not.toContain(`"1,000 pages had visits`);
    // "pages" of the export (requests of 250 rows) are not docs pages: 4 of them hold 1,000 paths.
    expect(allText(message)).not.toContain('ranked from the first 4 pages of the export');
  });

  it('tells Slack to parse no `@channel` or bare link in a path readers’ visits gave', () => {
    const message = digestMessage({
      numbers: numbers([{ path: '/@channel', human: 5, ai: 0, total: 5 }]),
      timeZone: 'UTC',
    });
    const texts = message.blocks.flatMap((block) =>
      block.type === 'section' && block.text ? [block.text] : block.type === 'context' ? block.elements : [],
    );
    const withPath = texts.filter((text) => 'text' in text && text.text.includes('/@channel'));
    expect(withPath.length).toBeGreaterThan(0);
    for (const text of withPath) expect(text).toMatchObject({ type: 'mrkdwn', verbatim: true });
  });

  it('keeps within Slack’s limits on a whole message (50 blocks, and its blocks’ text in all): the end of a very long list gives way to the struggles, and says how many', () => {
    const site = 'https://docs.acme.com';
    // Paths whose links take ~500 characters each, and counts of 16 digits: a few lines fill a section.
    const path = (i: number) => {
      const ends = (middle: string) => `/${'&'.repeat(31)}${middle}${'&'.repeat(47)}`;
      let middle = `m${i}`;
      while (`${site}${ends(`${middle}x`)}`.replaceAll('&', '&amp;').length <= 500) middle += 'x';
      return ends(middle);
    };
    const top = Array.from({ length: 40 }, (_, i) => ({
      path: path(i),
      human: 1e15,
      ai: 1e15,
      total: 1e9 - i,
    }));
    const items = (kind: StruggleKind) =>
      Array.from({ length: 5 }, (_, i) => ({
        kind,
        subject: `${kind} ${i}`,
        count: 3,
        ...(kind === 'page' ? { comment: 'Unclear.' } : {}),
      }));
    const message = digestMessage({
      numbers: numbers(top, { human: 1e9, ai: 1e9, total: 2e9 }),
      timeZone: 'UTC',
      previous: { totals: { human: 1, ai: 1, total: 1 }, top: top.map((page) => ({ ...page, total: 1 })) },
      siteUrl: site,
      struggles: {
        pages: items('page'),
        searches: items('search'),
        questions: items('question'),
        unread: [],
        requests: 10,
        top: 5,
      },
    });

    expect(blockProblems(message.blocks, '/blocks', messageBlockLimit)).toEqual([]);
    expect(blocksText(message.blocks)).toBeLessThanOrEqual(MESSAGE_BLOCKS_TEXT_MAX);
    // The heading counts the pages shown; the note, those left out.
    const shown = Number(/\*Top (\d+) pages\*/.exec(allText(message))?.[1]);
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(40);
    expect(allText(message)).toContain(`*${shown}.*`);
    expect(allText(message)).not.toContain(`*${shown + 1}.*`);
    expect(allText(message)).toContain(`the other ${40 - shown} pages did not fit in one message`);
    expect(allText(message)).toContain('question 4');
  });

  it('with the most pages and struggles the settings allow, and what readers ordinarily write, stays under Slack’s cap on a message’s text', () => {
    const top = Array.from({ length: 40 }, (_, i) => ({
      path: `/guides/integrations/provider-${i}/configure-single-sign-on`,
      human: 4_000 - i * 50,
      ai: 900 - i * 10,
      total: 4_800 - i * 60,
    }));
    const message = digestMessage({
      numbers: numbers(top, { human: 52_000, ai: 9_000, total: 60_000 }),
      timeZone: 'Europe/Berlin',
      previous: { totals: { human: 50_000, ai: 8_000, total: 57_000 }, top },
      siteUrl: 'https://docs.acme-corp.com',
      struggles: ordinaryStruggles(5),
    });

    expect(blockProblems(message.blocks, '/blocks', messageBlockLimit)).toEqual([]);
    // Every block within its own limits, this digest would add up to some 11,600 characters of text.
    expect(blocksText(message.blocks)).toBeLessThanOrEqual(MESSAGE_BLOCKS_TEXT_MAX);
    const shown = Number(/\*Top (\d+) pages\*/.exec(allText(message))?.[1]);
    expect(shown).toBeGreaterThanOrEqual(20);
    expect(allText(message)).toContain(`the other ${40 - shown} pages did not fit in one message`);
    expect(allText(message)).toContain('case 4');
    // One page more than fits: it is the last one, not "the other 1 pages".
    const oneOver = digestMessage({
      numbers: numbers(top.slice(0, shown + 1), { human: 52_000, ai: 9_000, total: 60_000 }),
      timeZone: 'Europe/Berlin',
      previous: { totals: { human: 50_000, ai: 8_000, total: 57_000 }, top },
      siteUrl: 'https://docs.acme-corp.com',
      struggles: ordinaryStruggles(5),
    });
    expect(allText(oneOver)).toContain(`*Top ${shown} pages*`);
    expect(allText(oneOver)).toContain('the last page did not fit in one message');

    // With the defaults (10 pages, 3 of each struggle) everything is shown.
    const usual = digestMessage({
      numbers: numbers(top.slice(0, 10)),
      timeZone: 'Europe/Berlin',
      siteUrl: 'https://docs.acme-corp.com',
      struggles: ordinaryStruggles(3),
    });
    expect(allText(usual)).toContain('*Top 10 pages*');
    expect(allText(usual)).not.toContain('did not fit');
  });

  it('as text, for when Slack will not take its blocks: every page, the struggles escaped, and why the buttons are missing', () => {
    const top = Array.from({ length: 40 }, (_, i) => ({
      path: `/guides/page-${i}`,
      human: 400 - i,
      ai: 10,
      total: 410 - i,
    }));
    const struggles = ordinaryStruggles(2);
    struggles.searches[0] = { kind: 'search', subject: '<!channel> <https://evil.example|docs>', count: 4 };
    const { plain } = digestMessage({ numbers: numbers(top), timeZone: 'UTC', struggles });

    expect(plain).toMatch(/^Docs digest, 10–16 Mar 2025 \(UTC\): 1,100 visitors/);
    expect(plain).toContain('*Top 40 pages* by unique visitors');
    expect(plain).toContain('*40.* /guides/page-39');
    expect(plain).toContain('*Where readers struggled*');
    expect(plain).toContain('🔍 “&lt;!channel&gt; &lt;https://evil.example|docs&gt;”  ·  searched 4 times');
    expect(plain).not.toContain('<!channel>');
    expect(plain).toContain('without its “Fix with the docs agent” buttons');
  });
});

describe('the pages with the most thumbs down, when feedback by page had more pages than it gave', () => {
  it('says the list may miss pages, under it or in its place, and as text too', () => {
    const cut = { ...ordinaryStruggles(2), pagesCut: true as const };
    const listed = digestMessage({ numbers: numbers(pages), timeZone: 'UTC', struggles: cut });
    expect(allText(listed)).toContain('has more pages: this list may miss some with more thumbs down');
    expect(listed.plain).toContain('has more pages: this list may miss some with more thumbs down');

    const none = digestMessage({
      numbers: numbers(pages),
      timeZone: 'UTC',
      struggles: { ...cut, pages: [], searches: [], questions: [] },
    });
    // Not "no thumbs down this week": the pages not given may have some.
    expect(allText(none)).toContain('No empty searches or unanswered questions this week.');
    expect(allText(none)).toContain('has more pages: some of those may have thumbs down');
    expect(none.plain).toContain('has more pages: some of those may have thumbs down');

    const whole = digestMessage({
      numbers: numbers(pages),
      timeZone: 'UTC',
      struggles: ordinaryStruggles(2),
    });
    expect(allText(whole)).not.toContain('Mintlify gave the feedback counts');
  });
});

describe('the digest as text, with readers’ formatting', () => {
  it('shows a reader’s markup as typed, never as bold, strike-through or a code block that swallows the rest of the digest', () => {
    const struggles = ordinaryStruggles(2);
    struggles.searches[0] = { kind: 'search', subject: '*URGENT* read ~this~', count: 4 };
    struggles.questions[0] = { kind: 'question', subject: 'Why ```', count: 2 };
    const { plain } = digestMessage({ numbers: numbers(pages), timeZone: 'UTC', struggles });
    // In the laid-out digest these are plain_text; as text, Slack's mrkdwn would format them.
    expect(plain).not.toContain('*URGENT*');
    expect(plain).not.toContain('~this~');
    expect(plain).not.toContain('```');
    // Shown as typed, with marks that look alike and format nothing.
    expect(plain).toContain('“\u2217URGENT\u2217 read \u223cthis\u223c”');
    expect(plain).toContain('“Why \u02cb\u02cb\u02cb”');
    // The digest's own markup stands.
    expect(plain).toContain('*Where readers struggled*');
  });
});

/** What readers ordinarily write: a sentence of feedback, a search term, a question. */
function ordinaryStruggles(top: number): Struggles {
  const items = (kind: StruggleKind): Struggle[] =>
    Array.from({ length: top }, (_, i) =>
      kind === 'page'
        ? {
            kind,
            subject: `/guides/integrations/provider-${i}/configure-single-sign-on`,
            count: 12 - i,
            comment:
              'The steps for the identity provider do not match what I see in the admin console any more, and nothing says which plan includes SCIM provisioning.',
          }
        : kind === 'search'
          ? { kind, subject: `rotate api key ${i}`, count: 30 - i }
          : {
              kind,
              subject: `How do I configure SAML single sign-on with Okta when my organization has several email domains (case ${i})?`,
              count: 9 - i,
            },
    );
  return {
    pages: items('page'),
    searches: items('search'),
    questions: items('question'),
    unread: [],
    requests: 10,
    top,
  };
}

describe('pieces of the digest message', () => {
  it('never cut an emoji in half: in the item’s line, its button, or the instruction the form suggests', () => {
    const subject = `aa${'😀'.repeat(400)}`;
    const blocks = strugglesBlocks(
      {
        pages: [],
        searches: [{ kind: 'search', subject, count: 3 }],
        questions: [],
        unread: [],
        requests: 3,
        top: 3,
      },
      '16–22 Nov 2026',
    );
    const value = parseStruggleValue(
      (
        blocks.find((block) => block.type === 'section' && block.accessory) as {
          accessory: { value: string };
        }
      ).accessory.value,
    );
    const texts = [JSON.stringify(blocks), suggestedInstruction(value!)];
    for (const text of texts)
      expect(text).not.toMatch(/\\ud83d(?!\\ude00)|[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(suggestedInstruction(value!)).toContain('"aa😀😀');
  });

  it('suggests using readers’ feedback on a page only when one of them wrote some', () => {
    const page = { kind: 'page' as const, subject: '/cli/deploy', count: 3, range: '16–22 Nov 2026' };
    expect(suggestedInstruction({ ...page, comment: 'The flags are wrong' })).toContain(
      'using their feedback',
    );
    const silent = suggestedInstruction({ ...page, noComment: true });
    expect(silent).not.toContain('feedback');
    expect(silent).toContain('with no comment');
    // The feedback read only in part (or the comment left out of the button to fit): no claim either way.
    const unknown = suggestedInstruction(page);
    expect(unknown).not.toContain('feedback');
    expect(unknown).not.toContain('comment');
  });

  it('reads the period as the days it covers, the last being the day before dateTo', () => {
    expect(dateRange('2025-03-10', '2025-03-17')).toBe('10–16 Mar 2025');
    expect(dateRange('2025-02-24', '2025-03-03')).toBe('24 Feb – 2 Mar 2025');
    expect(dateRange('2025-12-29', '2026-01-05')).toBe('29 Dec 2025 – 4 Jan 2026');
  });

  it('words changes plainly', () => {
    expect(changeText(110, 100)).toBe('↑ 10%');
    expect(changeText(90, 100)).toBe('↓ 10%');
    expect(changeText(100, 100)).toBe('no change');
    // mrkdwn: a bare < would open a link that runs to the next >, garbling the line after it.
    expect(changeText(1001, 1000)).toBe('↑ &lt;1%');
    expect(changeText(5, 0)).toBe('up from 0');
    expect(changeText(5, undefined)).toBe('');
  });

  it('groups the digits of a large change as it does every other number', () => {
    // A new docs site: a handful of visitors last week, thousands this week.
    const message = digestMessage({
      numbers: numbers(pages, { human: 11_000, ai: 1_000, total: 12_000 }),
      timeZone: 'UTC',
      previous: { totals: { human: 2, ai: 1, total: 3 } },
    });
    const fields = (message.blocks[2] as { fields: Array<{ text: string }> }).fields.map(
      (field) => field.text,
    );
    expect(fields[2]).toContain('12,000');
    // Not `↑ 399900%`: read at a glance as a number of its own size.
    for (const text of [...fields, message.text]) expect(text).not.toMatch(/\d{4,}%/);
  });

  it('shortens long paths keeping their start and end', () => {
    const path = `/guides/${'x'.repeat(200)}/the-page-name`;
    const short = shortPath(path);
    expect(short).toHaveLength(80);
    expect(short.startsWith('/guides/')).toBe(true);
    expect(short.endsWith('/the-page-name')).toBe(true);
    expect(shortPath('/short')).toBe('/short');
  });

  it('builds page URLs that stay one Slack link', () => {
    expect(pageUrl('https://docs.acme.com/docs', 'guides/intro')).toBe(
      'https://docs.acme.com/docs/guides/intro',
    );
    expect(pageUrl('https://docs.acme.com', '/caf%C3%A9>x')).toBe('https://docs.acme.com/caf%C3%A9%3Ex');
    expect(pageUrl('https://docs.acme.com', '/é')).toBe('https://docs.acme.com/%C3%A9');
  });
});

describe('the section with nothing to show', () => {
  const lines = (unread: StruggleKind[]) =>
    strugglesBlocks({ pages: [], searches: [], questions: [], unread, requests: 0, top: 3 }, 'this week').map(
      (block) => JSON.stringify(block),
    );

  it('is left out when every kind was read and none had anything', () => {
    expect(lines([])).toEqual([]);
  });

  it('says which kinds were read and empty, and which were not read, never both of one kind', () => {
    const shown = lines(['search']).join('\n');
    expect(shown).toContain('No thumbs down or unanswered questions this week.');
    expect(shown).toContain('did not give the searches');
    const none = lines(['page', 'search', 'question']).join('\n');
    expect(none).not.toContain('this week.');
    expect(none).toContain('did not give the thumbs-down feedback, searches and assistant questions');
  });
});

describe('a page path in the digest as text', () => {
  it('names a page with thumbs down by its real path, as the top pages do, so it can be copied into /docs-agent', () => {
    const struggles = ordinaryStruggles(1);
    struggles.pages[0] = { kind: 'page', subject: '/api_reference/get_user', count: 3 };
    const { plain } = digestMessage({
      numbers: numbers([{ path: '/api_reference/get_user', human: 5, ai: 0, total: 5 }]),
      timeZone: 'UTC',
      struggles,
    });
    // The top pages list shows the path as it is...
    expect(plain).toContain('/api_reference/get_user (');
    // ...and the struggles line names the same page: a path is no reader's markup.
    expect(plain).toContain('👎 3 thumbs down  ·  /api_reference/get_user');
  });
});
