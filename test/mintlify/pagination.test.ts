import { describe, expect, it } from 'vitest';
import { visitorsRows as rows } from '../support/visitors.js';
import { failureOf, fakeAndClient, PROJECT_ID } from './clientHarness.js';

const range = { dateFrom: '2025-01-01', dateTo: '2025-01-08' };

async function collect<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const page of pages) all.push(page);
  return all;
}

describe('walking the visitors export page by page', () => {
  it('requests every offset exactly once and ends on the short last page', async () => {
    const { fake, client } = await fakeAndClient();
    const stored = rows(600);
    fake.setVisitors(stored);

    const pages = await collect(client.visitorsPages(PROJECT_ID, range));

    expect(pages.map((page) => [page.offset, page.visitors.length, page.hasMore])).toEqual([
      [0, 250, true],
      [250, 250, true],
      [500, 100, false],
    ]);
    expect(fake.requestsFor('visitors').map((request) => request.query)).toEqual(
      [0, 250, 500].map((offset) => ({ ...range, limit: '250', offset: String(offset) })),
    );
    expect(pages.flatMap((page) => page.visitors)).toEqual(stored);
  });

  it('an empty export is one page', async () => {
    const { fake, client } = await fakeAndClient();

    const pages = await collect(client.visitorsPages(PROJECT_ID, range));

    expect(pages).toEqual([
      { totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: false, offset: 0 },
    ]);
    expect(fake.requestsFor('visitors')).toHaveLength(1);
  });

  it('clamps the page size to 1..250', async () => {
    const { fake, client } = await fakeAndClient();
    fake.setVisitors(rows(3));

    await collect(client.visitorsPages(PROJECT_ID, { ...range, limit: 1_000 }));
    await collect(client.visitorsPages(PROJECT_ID, { ...range, limit: 0 }));

    expect(fake.requestsFor('visitors').map((request) => request.query.limit)).toEqual([
      '250',
      '1',
      '1',
      '1',
    ]);
  });

  it('stops at maxPages when hasMore never turns false', async () => {
    const { fake, client } = await fakeAndClient();
    const endless = { totals: { human: 1, ai: 0, total: 1 }, visitors: rows(2), hasMore: true };
    fake.injectFault('visitors', { status: 200, body: endless }, Number.POSITIVE_INFINITY);

    const pages = await collect(client.visitorsPages(PROJECT_ID, { ...range, limit: 2, maxPages: 3 }));

    expect(pages.map((page) => page.offset)).toEqual([0, 2, 4]);
    expect(pages.at(-1)?.hasMore).toBe(true);
    expect(fake.requestsFor('visitors')).toHaveLength(3);
  });

  it('a 429 mid-way resumes at the same offset, not from the start', async () => {
    const { fake, client, sleeps } = await fakeAndClient();
    const stored = rows(600);
    fake.setVisitors(stored);
    fake.injectFault((request) => request.query.offset === '250', { status: 429, retryAfter: '2' });

    const pages = await collect(client.visitorsPages(PROJECT_ID, range));

    expect(fake.requestsFor('visitors').map((request) => request.query.offset)).toEqual([
      '0',
      '250',
      '250',
      '500',
    ]);
    expect(sleeps).toEqual([2_000]);
    expect(pages.flatMap((page) => page.visitors)).toEqual(stored);
  });

  it('a page that keeps failing ends the walk with its error', async () => {
    const { fake, client } = await fakeAndClient({ retry: { maxAttempts: 2 } });
    fake.setVisitors(rows(300));
    fake.injectFault((request) => request.query.offset === '250', { status: 500 }, 2);
    const offsets: number[] = [];

    const error = await failureOf(
      (async () => {
        for await (const page of client.visitorsPages(PROJECT_ID, range)) offsets.push(page.offset);
      })(),
    );

    expect(error).toMatchObject({ kind: 'service', status: 500 });
    expect(offsets).toEqual([0]);
  });
});
