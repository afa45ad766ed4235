import { describe, expect, it } from 'vitest';
import { type PageVisitors, TopPages } from '../../src/digest/topPages.js';

const page = (path: string, total: number): PageVisitors => ({ path, human: total, ai: 0, total });

function topOf(rows: PageVisitors[], size: number): string[] {
  const top = new TopPages(size);
  for (const row of rows) top.offer(row);
  return top.ranked().map((entry) => `${entry.path}:${entry.total}`);
}

describe('keeping the top pages of unsorted rows', () => {
  it('ranks by total visitors whatever the order the rows come in', () => {
    const rows = [page('/c', 5), page('/a', 50), page('/e', 1), page('/b', 20), page('/d', 30)];
    expect(topOf(rows, 3)).toEqual(['/a:50', '/d:30', '/b:20']);
    expect(topOf([...rows].reverse(), 3)).toEqual(['/a:50', '/d:30', '/b:20']);
  });

  it('breaks ties by path, so the ranking never depends on the page order', () => {
    const rows = [
      page('/zeta', 10),
      page('/beta', 10),
      page('/alpha', 10),
      page('/top', 99),
      page('/gamma', 10),
    ];
    expect(topOf(rows, 3)).toEqual(['/top:99', '/alpha:10', '/beta:10']);
    expect(topOf([...rows].reverse(), 3)).toEqual(['/top:99', '/alpha:10', '/beta:10']);
  });

  it('keeps everything when there are fewer rows than N', () => {
    expect(topOf([page('/b', 2), page('/a', 3)], 10)).toEqual(['/a:3', '/b:2']);
    expect(topOf([], 10)).toEqual([]);
  });

  it('never holds more than N entries, however many rows pass through', () => {
    const top = new TopPages(5);
    for (let i = 0; i < 50_000; i++) top.offer(page(`/p-${(i * 7919) % 50_000}`, (i * 104_729) % 1_000));
    expect(top.ranked()).toHaveLength(5);
    expect(top.seen).toBe(50_000);
    expect(top.ranked().every((entry) => entry.total === 999)).toBe(true);
  });

  it('keeps only the counts of a row, not the rest of the service’s answer', () => {
    const top = new TopPages(1);
    top.offer({ ...page('/a', 1), extra: 'x'.repeat(1000) } as PageVisitors);
    expect(top.ranked()).toEqual([{ path: '/a', human: 1, ai: 0, total: 1 }]);
  });
});
