import type { UserGroupQuery } from './user-groups.port.js';

/*
 * The admin search's decisions (GET /api/admin/user-groups), the same on both engines: which
 * filters bind, how a provided-id prefix becomes a range the unique index serves, and where a page
 * starts (the cursor: after a team id; ordering by team id). Each engine keeps its SQL, and its own
 * text matching of names (SQLite folds case in JavaScript, PostgreSQL in its collation).
 */

/** What both engines bind for one page of the search. */
export interface UserGroupSearchPlan {
  search: string | null;
  /** The exclusive upper bound of provided ids starting with `search` (null: no bound, or no search). */
  searchEnd: string | null;
  parent: string | null;
  tag: string | null;
  isDemoGroup: boolean | null;
  /** Team ids above this one, in team id order (0: the first page). */
  afterTeamId: number;
  limit: number;
}

export function userGroupSearchPlan(query: UserGroupQuery): UserGroupSearchPlan {
  const { search } = query;
  return {
    search: search ?? null,
    searchEnd: search === undefined ? null : prefixUpperBound(search),
    parent: query.parent ?? null,
    tag: query.tag ?? null,
    isDemoGroup: query.isDemoGroup ?? null,
    afterTeamId: query.afterTeamId ?? 0,
    limit: query.limit,
  };
}

/**
 * The smallest string above every string that starts with `prefix` in code point order (SQLite's
 * BINARY collation, PostgreSQL's "C" collation over UTF-8), or null when no such string exists. Turns
 * a prefix match into a range of plain comparisons, exact for every string (U+10FFFF included), which
 * the unique (workspace_id, environment, provided_id) index can serve whenever a query filters on it alone.
 */
export function prefixUpperBound(prefix: string): string | null {
  const codePoints = Array.from(prefix, (char) => char.codePointAt(0) ?? 0);
  for (let last = codePoints.pop(); last !== undefined; last = codePoints.pop()) {
    if (last < 0x10ffff) {
      // Surrogates never occur in stored text, so the code point after U+D7FF is U+E000.
      codePoints.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...codePoints);
    }
  }
  return null;
}
