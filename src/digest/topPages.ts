/**
 * The N most visited pages of a stream of rows that arrive in no particular order, kept in a
 * sorted array of at most N entries: memory stays the same whether the site has 100 paths or
 * 100,000. N is small (DIGEST_TOP is at most 40), so insertion into an array beats a heap here.
 */

export interface PageVisitors {
  path: string;
  human: number;
  ai: number;
  /** Deduplicated across human and AI: not human + ai. */
  total: number;
}

/** Most visitors first; equal totals in path order, so the ranking never depends on the page order. */
function ranksBefore(a: PageVisitors, b: PageVisitors): boolean {
  return a.total !== b.total ? a.total > b.total : a.path < b.path;
}

export class TopPages {
  readonly #size: number;
  readonly #ranked: PageVisitors[] = [];
  #seen = 0;

  /** `from`: the ranking of rows read before (at most `size` of them, best first), and how many they were. */
  constructor(size: number, from?: { ranked: readonly PageVisitors[]; seen: number }) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`TopPages: size must be >= 1, got ${size}`);
    this.#size = size;
    if (from) {
      for (const row of from.ranked) this.offer(row);
      this.#seen = from.seen;
    }
  }

  offer(row: PageVisitors): void {
    const ranked = this.#ranked;
    // The export is paged by offset, in no promised order: a row may come again on a later page.
    // Ranked once, with its larger count (a row not kept is not known again, and counts twice in `seen`).
    const again = ranked.findIndex((entry) => entry.path === row.path);
    if (again !== -1) {
      if (!ranksBefore(row, ranked[again] as PageVisitors)) return;
      ranked.splice(again, 1);
    } else this.#seen += 1;
    const last = ranked[ranked.length - 1];
    if (ranked.length === this.#size && last && !ranksBefore(row, last)) return;
    // Copy only the four fields: the service's rows may carry more, and they must not be kept.
    const entry = { path: row.path, human: row.human, ai: row.ai, total: row.total };
    let at = ranked.length;
    while (at > 0 && ranksBefore(entry, ranked[at - 1] as PageVisitors)) at--;
    ranked.splice(at, 0, entry);
    if (ranked.length > this.#size) ranked.pop();
  }

  /** How many rows were offered (the number of paths with visits, when every page was read). */
  get seen(): number {
    return this.#seen;
  }

  /** The ranking so far, best first. */
  ranked(): PageVisitors[] {
    return this.#ranked.map((entry) => ({ ...entry }));
  }
}
