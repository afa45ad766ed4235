import type { VisitorsRow } from '../../src/mintlify/index.js';

/**
 * `count` rows of the visitors export, in no particular order (the docs promise no sorting), several
 * pages tying; with `peak`, that page has by far the most visitors.
 */
export function visitorsRows(count: number, options: { peak?: number } = {}): VisitorsRow[] {
  return Array.from({ length: count }, (_, i) => {
    const human = i === options.peak ? 10_000 : (i * 7919) % 101;
    return { path: `/page-${i}`, human, ai: i % 3, total: human + (i % 3) };
  });
}
