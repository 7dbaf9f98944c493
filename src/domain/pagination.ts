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
