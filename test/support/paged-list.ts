import { expect } from 'vitest';
import type { ApiResponse } from './http-client.js';

/** Sends one GET of `path` (its query included) as some caller, over inject or a socket, and returns the answer. */
export type PageReader = (path: string) => Promise<ApiResponse>;

export type Query = Record<string, string | number | undefined>;

/** `path` with `query` appended; undefined values are left out. */
export function withQuery(path: string, query: Query = {}): string {
  const entries = Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
  return entries.length === 0
    ? path
    : `${path}?${new URLSearchParams(entries.map(([key, value]): [string, string] => [key, String(value)])).toString()}`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = any;

export interface Pages<T = Item> {
  /** Each page's items, in the order they came. */
  pages: T[][];
  items: T[];
  /** The next_cursor of every page; the last is null. */
  cursors: Array<string | null>;
}

/**
 * Walks a cursor-paginated admin list from its first page (or `query.cursor`) to its last; each page
 * must be a 200 success envelope holding exactly `success`, `plural` and `next_cursor`.
 */
export async function collectPages<T = Item>(
  readPage: PageReader,
  path: string,
  plural: string,
  query: Query = {},
): Promise<Pages<T>> {
  const result: Pages<T> = { pages: [], items: [], cursors: [] };
  let cursor = query.cursor === undefined ? undefined : String(query.cursor);
  do {
    const page = await readPage(withQuery(path, { ...query, cursor }));
    expect({ status: page.status, body: page.body }).toMatchObject({ status: 200, body: { success: 1 } });
    expect(Object.keys(page.body).sort()).toEqual(['next_cursor', plural, 'success'].sort());
    result.pages.push(page.body[plural]);
    result.items.push(...page.body[plural]);
    result.cursors.push(page.body.next_cursor);
    cursor = page.body.next_cursor ?? undefined;
    if (result.pages.length > 10_000) throw new Error(`${path} never reached its last page`);
  } while (cursor !== undefined);
  return result;
}

/** Every item of a cursor-paginated admin list, in as few pages as the API allows (1000 a page). */
export async function listAll<T = Item>(
  readPage: PageReader,
  path: string,
  plural: string,
  query: Query = {},
): Promise<T[]> {
  return (await collectPages<T>(readPage, path, plural, { limit: 1000, ...query })).items;
}
