import type { FeedbackStatus, MintlifyClient } from '../mintlify/index.js';
import { cursorPages, isMintlifyError } from '../mintlify/index.js';
import { cutAt, withoutBidiControls } from '../slack/escape.js';
import type { PeriodDates } from './collectVisitors.js';

/**
 * "Where readers struggled": the pages with the most thumbs down (with a reader's comment) in
 * feedback the docs team has not resolved or dismissed in Mintlify, the searches nobody clicked, and
 * the questions the assistant could not answer, over the digest's period. At most 10 analytics reads in all (the organization has 100 requests an hour for
 * every analytics endpoint, and the digest's own pages spend some): one for feedback by page, and
 * at most three pages of each list. Only a 5xx or a cut connection is tried again (the client's
 * retries, each a request Mintlify counts), a 429 never.
 * A kind that cannot be read is left out, and says so.
 */

export type StruggleKind = 'page' | 'search' | 'question';

export interface Struggle {
  kind: StruggleKind;
  /** The page path, the search term, or the question (readers' text: untrusted). */
  subject: string;
  /** Thumbs down, searches, or askings. */
  count: number;
  /** A reader's comment on the page (untrusted), when there is one. */
  comment?: string;
  /**
   * The page's feedback was all read, and none of it had a comment. Left out when the feedback list
   * was read only in part: a comment may lie past what was read.
   */
  noComment?: true;
}

export interface Struggles {
  pages: Struggle[];
  searches: Struggle[];
  questions: Struggle[];
  /** The kinds that could not be read (a refusal, a timeout): the digest says so in one line. */
  unread: StruggleKind[];
  /**
   * Feedback by page gave its first 100 pages of more (it has no cursor): pages past them, perhaps
   * with more thumbs down, are missing, and the digest says the list may miss some.
   */
  pagesCut?: true;
  /** Analytics requests this read spent (0 when a second digest reused what was read). */
  requests: number;
  /** How many of each kind were asked for (DIGEST_STRUGGLES). */
  top: number;
}

/** Pages read of each list, at most: with feedback by page, 1 + 3 x 3 = 10 requests a digest. */
const LIST_PAGES = 3;
/**
 * Feedback the docs team has not dealt with yet in Mintlify's dashboard: what they resolved or
 * dismissed (spam, a page fixed since) is neither counted nor offered to a job again.
 */
const OPEN_FEEDBACK: readonly FeedbackStatus[] = ['pending', 'in_progress'];
/** Readers' text is cut to this before it is kept (shown shorter still). */
const READER_TEXT_MAX = 500;

type Analytics = Pick<MintlifyClient, 'feedbackByPage' | 'feedbackPage' | 'searchesPage' | 'assistantPage'>;

export async function collectStruggles(
  mintlify: Analytics,
  projectId: string,
  period: PeriodDates,
  options: { top: number },
): Promise<Struggles> {
  const dates = { dateFrom: period.dateFrom, dateTo: period.dateTo };
  let requests = 0;
  const counted = <T>(read: () => Promise<T>) => {
    requests += 1;
    return read();
  };
  const unread: StruggleKind[] = [];
  let pagesCut = false;
  const attempt = async <T>(kind: StruggleKind, read: () => Promise<T[]>): Promise<T[]> => {
    try {
      return await read();
    } catch (error) {
      if (!isMintlifyError(error)) throw error; // a refusal (429 included), a timeout, an odd answer
      unread.push(kind);
      return [];
    }
  };
  const { top } = options;

  // One after another: the hourly limit is the organization's, and the order keeps the count exact.
  const pages = await attempt('page', async () => {
    // Page-level feedback only (its thumbs are what ranks a page): the 100 rows are all such pages.
    const byPage = await counted(() =>
      mintlify.feedbackByPage(projectId, {
        ...dates,
        limit: 100,
        source: 'contextual',
        status: OPEN_FEEDBACK,
      }),
    );
    pagesCut = byPage.hasMore;
    const worst = byPage.feedback
      .filter((row) => row.thumbsDown > 0)
      .sort((a, b) => b.thumbsDown - a.thumbsDown || a.path.localeCompare(b.path))
      .slice(0, top);
    if (worst.length === 0) return [];
    // A reader's comment for each of those pages, from the first pages of the feedback list: page-level
    // feedback of a reader who did not find the page helpful (a code block's feedback, an agent's or
    // a bare vote is not what ranked the page).
    const comments = new Map<string, string>();
    const listed = new Set(worst.map((row) => row.path));
    const feedback = cursorPages(
      (cursor) =>
        counted(() =>
          mintlify.feedbackPage(projectId, {
            ...dates,
            limit: 100,
            source: 'contextual',
            status: OPEN_FEEDBACK,
            ...cursor,
          }),
        ),
      LIST_PAGES,
    );
    // Whether the list was read to its end: only then is a page without a comment known to have none.
    let readToEnd = false;
    for await (const answer of feedback) {
      if (answer.hasMore === false || !answer.nextCursor) readToEnd = true;
      for (const entry of answer.feedback) {
        // Readers' words are shown as plain text in the digest: a bidi override there would turn the bot's own after them around.
        const comment = entry.comment && withoutBidiControls(entry.comment).trim();
        if (
          !comment ||
          !listed.has(entry.path) ||
          entry.source !== 'contextual' ||
          entry.helpful !== false ||
          comments.has(entry.path)
        )
          continue;
        comments.set(entry.path, cutAt(comment, READER_TEXT_MAX));
      }
      if (comments.size === worst.length) break;
    }
    return worst.map((row): Struggle => {
      const comment = comments.get(row.path);
      const said = comment ? { comment } : readToEnd ? { noComment: true as const } : {};
      return { kind: 'page', subject: row.path, count: row.thumbsDown, ...said };
    });
  });

  const searches = await attempt('search', async () => {
    const found: Struggle[] = [];
    const searched = cursorPages(
      (cursor) => counted(() => mintlify.searchesPage(projectId, { ...dates, limit: 100, ...cursor })),
      LIST_PAGES,
    );
    // Ordered by hits: the first terms nobody clicked are the most searched of them.
    for await (const answer of searched) {
      for (const row of answer.searches) {
        const term = withoutBidiControls(row.searchQuery).trim();
        if (!term || !(row.ctr === 0 || row.topClickedPage === null)) continue;
        if (found.length < top)
          found.push({ kind: 'search', subject: cutAt(term, READER_TEXT_MAX), count: row.hits });
      }
      if (found.length === top) break;
    }
    return found.sort((a, b) => b.count - a.count);
  });

  const questions = await attempt('question', async () => {
    const askings = new Map<string, Struggle>();
    const asked = cursorPages(
      (cursor) => counted(() => mintlify.assistantPage(projectId, { ...dates, limit: 1000, ...cursor })),
      LIST_PAGES,
    );
    for await (const answer of asked) {
      for (const row of answer.conversations) {
        if (row.resolutionStatus !== 'unanswered') continue;
        const question = withoutBidiControls(row.query).replace(/\s+/g, ' ').trim();
        if (!question) continue;
        // The same question asked again (any case, any spacing) is counted once, with its askings.
        const key = question.toLowerCase().replace(/[?!.\s]+$/, '');
        const seen = askings.get(key);
        if (seen) seen.count += 1;
        else askings.set(key, { kind: 'question', subject: cutAt(question, READER_TEXT_MAX), count: 1 });
      }
    }
    return [...askings.values()]
      .sort((a, b) => b.count - a.count || a.subject.localeCompare(b.subject))
      .slice(0, top);
  });

  return { pages, searches, questions, unread, requests, top, ...(pagesCut ? { pagesCut: true } : {}) };
}
