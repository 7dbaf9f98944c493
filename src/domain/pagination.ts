/** A page of results and the key to continue after it (null on the last page). */
export interface Page<T> {
  items: T[];
  next: number | null;
}

/**
 * Asks the store for one row more than the page holds: if it comes back there is a next page, and
 * the cursor is the key of the page's last row. No count query, no empty last page.
 */
export async function fetchPage<Row, T>(
  limit: number,
  fetch: (limitPlusOne: number) => Promise<Row[]>,
  keyOf: (row: Row) => number,
  present: (row: Row) => T,
): Promise<Page<T>> {
  const rows = await fetch(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map(present), next: rows.length > limit && last !== undefined ? keyOf(last) : null };
}

/** Rows read from the store at a time by a page bounded in bytes: what one read holds in memory. */
export const PAGE_CHUNK_ROWS = 100;

/**
 * A page bounded by bytes as well as by count: rows are read PAGE_CHUNK_ROWS at a time (after the
 * cursor), and the page ends once what it holds passes `maxBytes`, with the cursor at its last row,
 * so a page of large rows is never larger than `maxBytes` and one row. `fetch(after, n)` reads up
 * to n rows after the key `after` (undefined: from the start).
 */
export async function fetchPageWithinBytes<Row, T>(
  { limit, after, maxBytes }: { limit: number; after: number | undefined; maxBytes: number },
  fetch: (after: number | undefined, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => number,
  present: (row: Row) => T,
  bytesOf: (item: T) => number,
): Promise<Page<T>> {
  const items: T[] = [];
  let bytes = 0;
  let cursor = after;
  for (;;) {
    const wanted = Math.min(limit - items.length + 1, PAGE_CHUNK_ROWS);
    const rows = await fetch(cursor, wanted);
    for (const row of rows) {
      // One row past the count limit: there is a next page, after the page's last row.
      if (items.length === limit) return { items, next: cursor ?? null };
      const item = present(row);
      items.push(item);
      bytes += bytesOf(item);
      cursor = keyOf(row);
      if (bytes > maxBytes) return { items, next: cursor };
    }
    if (rows.length < wanted) return { items, next: null };
  }
}
