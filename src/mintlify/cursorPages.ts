/**
 * The pages of one of Mintlify's cursor-paginated lists (feedback, searches, assistant), first to
 * last: `read` asks for the page at a cursor (none for the first). Ends at the last page or after
 * `maxPages`; a caller that has enough stops early, and no further page is asked for.
 */
export async function* cursorPages<Page extends { nextCursor: string | null; hasMore?: boolean }>(
  read: (cursor: { cursor?: string }) => Promise<Page>,
  maxPages: number,
): AsyncGenerator<Page, void, undefined> {
  let cursor: string | null = null;
  for (let pages = 0; pages < maxPages; pages += 1) {
    const page: Page = await read(cursor === null ? {} : { cursor });
    yield page;
    // Searches say no `hasMore`: their cursor alone tells.
    if (page.hasMore === false || !page.nextCursor) return;
    cursor = page.nextCursor;
  }
}
