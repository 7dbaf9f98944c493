import type { UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import type { Tenant } from '../../../domain/tenancy.js';
import type { ApiTokenState } from '../../../domain/api-tokens/api-token-check.js';
import { rateLimitFromColumns } from '../../api-token-records.js';
import type { UserGroupLink, UserGroupSyncStore } from '../../../domain/user-group-sync/user-group-sync.port.js';
import type {
  UserGroupLookup,
  UserGroupLookupAnswer,
  UserGroupLookupKey,
  UserGroupQuery,
  UserGroupStore,
} from '../../../domain/user-groups/user-groups.port.js';
import { userGroupSearchPlan } from '../../../domain/user-groups/user-group-search.rules.js';
import type { PostgresDatabase, Queryable } from '../postgres-database.js';
import { toNumber } from '../rows.js';
import type { Int8 } from '../rows.js';
import { statements } from '../statements.js';
import { decodeUserGroupRow, SELECT_GROUP, TENANT, findOne, findMany, type PostgresUserGroupRow } from './columns.js';
import { GROUP_COLUMN } from '../../user-group-columns.js';
import { containsPattern } from '../../contains-pattern.js';

/**
 * The columns a group lookup adds when it also confirms the caller's API token (a LEFT JOIN of
 * api_tokens on @apiTokenId, `t`): its state in the lookup's own snapshot.
 */
const API_TOKEN_STATE_COLUMNS = `(t.id IS NOT NULL AND t.revoked_at IS NULL) AS api_token_live, t.rate_limit_per_second AS api_token_per_second,
  t.rate_limit_burst AS api_token_burst`;

interface ApiTokenStateColumns {
  api_token_live: boolean | null;
  api_token_per_second: number | null;
  api_token_burst: number | null;
}

/** What the lookup read of the token: not live when it is revoked or gone (NULL). */
function apiTokenStateOf(row: ApiTokenStateColumns): ApiTokenState {
  return {
    live: row.api_token_live === true,
    rateLimit: rateLimitFromColumns(row.api_token_per_second, row.api_token_burst),
  };
}

/**
 * Hot reads in one statement (batched by src/store/hot-reads.ts): one row per lookup, in the order
 * asked (`lookup_index`), each with its group or nulls and, when the lookup carries one
 * (src/domain/api-tokens/api-token-check.ts), the state of the caller's API token in the same snapshot.
 * `match` finds a lookup's group; it must leave the planner one index whatever the statistics say.
 */
const lookups = (match: string) => `SELECT k.i AS lookup_index, ${API_TOKEN_STATE_COLUMNS}, grp.*
  FROM unnest(@indexes::int[], @workspaceIds::bigint[], @environments::text[], @apiTokenIds::bigint[], @keys::text[])
    AS k(i, workspace_id, environment, api_token_id, key)
  LEFT JOIN api_tokens t ON t.id = k.api_token_id
  LEFT JOIN LATERAL (${SELECT_GROUP} WHERE ${match}) grp ON true
  ORDER BY k.i`;

/*
 * Plan-stable matches (docs/performance.md, "Without statistics"). On a table never analysed the
 * planner prices `workspace_id = … AND environment = …` as selective, so user_groups_tenant (a
 * prefix of both) ties with the unique index and, chosen, walks the whole tenant per lookup.
 * - By provided id: the key as a closed range (equality under the column's "C" collation) and ordered
 *   by it: only user_groups_provided_id_key yields that order without a sort, so it wins either way.
 * - By token hash (unique on its own): the tenant compared with IS NOT DISTINCT FROM (the columns are
 *   NOT NULL, so it means equality), which no index serves, leaving user_groups_token_hash_key.
 */
const BY_PROVIDED_ID = `g.workspace_id = k.workspace_id AND g.environment = k.environment
    AND g.provided_id >= k.key AND g.provided_id <= k.key ORDER BY g.provided_id LIMIT 1`;
const BY_TOKEN_HASH = `g.token_hash = k.key
    AND (g.workspace_id, g.environment) IS NOT DISTINCT FROM (k.workspace_id, k.environment)`;

/** The admin list's filters other than the search, each NULL when it does not bind. */
const FILTERS = `(@parent::text IS NULL OR g.parent_team_id = (SELECT p.team_id FROM user_groups p
        WHERE p.workspace_id = @workspaceId AND p.environment = @environment AND p.provided_id = @parent))
      AND (@tag::text IS NULL OR g.${GROUP_COLUMN.tags} @> ARRAY[@tag::text])
      AND (@isDemoGroup::boolean IS NULL OR g.${GROUP_COLUMN.isDemoGroup} = @isDemoGroup)`;

/**
 * The admin search (`q`): a provided id starting with the text, or a name containing it in any case.
 * The prefix is a range of user_groups_provided_id_key, exact for every string under the column's
 * "C" collation. The name test, `name`, comes in two forms with strpos()'s results: the text is
 * literal, and lower() folds case beyond ASCII on a database with a UTF-8 locale.
 * - `lower(name) LIKE '%…%'` (%, _ and backslash escaped), which the trigram index
 *   user_groups_name_trigrams serves (migration 21), for a text with a trigram to look up.
 * - strpos() for a text without one (under three letters or digits in a row): the index would
 *   return every name to be checked again, so it is kept out of the plan.
 * Not prepared, so each call is planned with its own values: with statistics the planner weighs a rare
 * text (both indexes OR-ed as bitmaps, the few matches sorted by team_id) against a common one (the
 * tenant walked in team_id order until a page is full), which no one generic plan could serve
 * (docs/performance.md, "Scale").
 */
const search = (name: string) => `${SELECT_GROUP}
    WHERE ${TENANT} AND g.team_id > @afterTeamId
      AND ${FILTERS}
      AND ((g.provided_id >= @search AND (@searchEnd::text IS NULL OR g.provided_id < @searchEnd)) OR ${name})
    ORDER BY g.team_id LIMIT @limit`;

export const searchSql = statements({
  byTrigrams: search('lower(g.name) LIKE lower(@namePattern::text)'),
  byWalk: search('strpos(lower(g.name), lower(@search)) > 0'),
});

/** Whether pg_trgm finds a trigram of a LIKE pattern's text: three word characters in a row. */
const HAS_TRIGRAM = /[\p{L}\p{N}]{3}/u;

/** A lookup's row: its group's columns (all null when there is none) beside the API token's state. */
type LookupRow = (PostgresUserGroupRow | { [column in keyof PostgresUserGroupRow]: null }) & ApiTokenStateColumns;

/** The reads of groups and of their links. */
export const readSql = statements(
  {
    byProvidedId: `${SELECT_GROUP} WHERE ${TENANT} AND g.provided_id = @providedId`,
    // The hot reads, batched, with each caller's API token confirmed in the same round trip.
    byProvidedIdLookups: lookups(BY_PROVIDED_ID),
    byTokenHashLookups: lookups(BY_TOKEN_HASH),
    byTeamIdInTenant: `${SELECT_GROUP} WHERE g.team_id = @teamId AND ${TENANT}`,
    // An array parameter keeps one statement for any number of ids, each found as a hot lookup finds
    // one (BY_PROVIDED_ID): as "provided_id = ANY(…) ORDER BY team_id", the planner's custom plans
    // walked the primary key in team_id order, testing every row against the array (0.7 s for 1 000
    // ids of a 20 000-group tenant, a sync's plan reading 10 000 in ten such statements).
    byProvidedIds: `SELECT grp.* FROM (SELECT DISTINCT @workspaceId::bigint AS workspace_id, @environment::text AS environment, u.key
        FROM unnest(@providedIds::text[]) AS u(key)) k
      CROSS JOIN LATERAL (${SELECT_GROUP} WHERE ${BY_PROVIDED_ID}) grp
    ORDER BY grp.team_id`,
    // Walks the tenant in team_id order (index user_groups_tenant) and stops at the limit. A search
    // (`q`) has a statement of its own (searchSql). The tag as containment (@>), which the GIN index
    // user_groups_tags serves.
    list: `${SELECT_GROUP}
    WHERE ${TENANT} AND g.team_id > @afterTeamId
      AND ${FILTERS}
    ORDER BY g.team_id LIMIT @limit`,
    byTeamIds: `${SELECT_GROUP} WHERE ${TENANT} AND g.team_id = ANY(@teamIds::bigint[])`,
    // A sync's plan (docs/api.md#sync-tenants-as-code): the children by user_groups_parent, never a walk of the tenant per
    // parent. The tenant is compared with IS NOT DISTINCT FROM (the columns are NOT NULL, so it means
    // equality), which no index serves: unanalysed, the planner would otherwise price user_groups_tenant
    // as selective (docs/performance.md, "Without statistics").
    childLinks: `SELECT c.team_id, c.provided_id, c.parent_team_id FROM user_groups c
      WHERE c.parent_team_id = ANY(@teamIds::bigint[])
        AND (c.workspace_id, c.environment) IS NOT DISTINCT FROM (@workspaceId::bigint, @environment::text)
      ORDER BY c.team_id`,
    // What a prune counts, reading the links alone: the tag as containment (@>), which the GIN index
    // user_groups_tags serves, as the admin list's tag filter.
    taggedLinks: `SELECT g.team_id, g.provided_id, g.parent_team_id FROM user_groups g
      WHERE ${TENANT} AND g.team_id > @afterTeamId AND g.${GROUP_COLUMN.tags} @> ARRAY[@tag::text]
      ORDER BY g.team_id LIMIT @limit`,
  },
  { prepared: true },
);

type LinkRow = { team_id: Int8; provided_id: string; parent_team_id: Int8 | null };

const linksOf = (rows: LinkRow[]): UserGroupLink[] =>
  rows.map((row) => ({
    teamId: toNumber(row.team_id),
    providedId: row.provided_id,
    parentTeamId: row.parent_team_id === null ? null : toNumber(row.parent_team_id),
  }));

export const byProvidedId = (q: Queryable, tenant: Tenant, providedId: string) =>
  findOne(q, readSql.byProvidedId({ ...tenant, providedId }));

/** The reads: the hot lookups (batched by src/store/hot-reads.ts), the admin's, a sync plan's. */
export function userGroupReads(
  db: PostgresDatabase,
): Pick<
  UserGroupStore & UserGroupSyncStore,
  | 'lookUpUserGroups'
  | 'findUserGroupsByProvidedIds'
  | 'findUserGroupByTeamId'
  | 'listUserGroups'
  | 'listUserGroupChildren'
  | 'listTaggedUserGroupLinks'
> {
  const lookupStatements = { providedId: readSql.byProvidedIdLookups, tokenHash: readSql.byTokenHashLookups };

  /** The lookups as one statement; the rows come back in the order asked, one per lookup. */
  const lookUp = async (by: UserGroupLookupKey, lookups: UserGroupLookup[]): Promise<UserGroupLookupAnswer[]> => {
    const rows = await db.rows<LookupRow>(
      lookupStatements[by]({
        indexes: lookups.map((_, index) => index),
        workspaceIds: lookups.map((lookup) => lookup.tenant.workspaceId),
        environments: lookups.map((lookup) => lookup.tenant.environment),
        apiTokenIds: lookups.map((lookup) => lookup.apiToken?.id ?? null),
        keys: lookups.map((lookup) => lookup.key),
      }),
    );
    return rows.map((row, index) => ({
      group: row.team_id === null ? null : decodeUserGroupRow(row),
      ...(lookups[index]!.apiToken ? { apiToken: apiTokenStateOf(row) } : {}),
    }));
  };

  const list = (query: UserGroupQuery): Promise<UserGroupRecord[]> => {
    const { search, ...plan } = userGroupSearchPlan(query);
    if (search === null) return findMany(db, readSql.list({ ...query.tenant, ...plan }));
    if (!HAS_TRIGRAM.test(search)) return findMany(db, searchSql.byWalk({ ...query.tenant, ...plan, search }));
    return findMany(
      db,
      searchSql.byTrigrams({ ...query.tenant, ...plan, search, namePattern: containsPattern(search) }),
    );
  };

  return {
    lookUpUserGroups: lookUp,
    findUserGroupsByProvidedIds: (tenant, providedIds) =>
      findMany(db, readSql.byProvidedIds({ ...tenant, providedIds })),
    findUserGroupByTeamId: (tenant, teamId) => findOne(db, readSql.byTeamIdInTenant({ ...tenant, teamId })),
    listUserGroups: list,
    // Two writes that each found a tree moved under them may wait for each other's roots: PostgreSQL
    listUserGroupChildren: async (tenant, parentTeamIds) =>
      linksOf(await db.rows<LinkRow>(readSql.childLinks({ ...tenant, teamIds: parentTeamIds }))),
    listTaggedUserGroupLinks: async (tenant, tag, { afterTeamId, limit }) =>
      linksOf(await db.rows<LinkRow>(readSql.taggedLinks({ ...tenant, tag, afterTeamId: afterTeamId ?? 0, limit }))),
  };
}
