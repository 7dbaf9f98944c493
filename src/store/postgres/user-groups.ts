import { HIERARCHY_READ_LIMIT } from '../../domain/user-groups/hierarchy.rules.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { MappingEntry, NewUserGroup, UserGroupRecord } from '../../domain/user-groups/user-group.records.js';
import type { Tenant } from '../../domain/tenancy.js';
import type { ApiTokenState } from '../../domain/api-tokens/api-token-check.js';
import { rateLimitFromColumns } from '../api-token-records.js';
import { batchWriteEntry, groupAudit, groupEntry } from '../../domain/user-groups/user-groups.rules.js';
import type { AuditEntry } from '../../domain/audit/audit-entry.js';
import type {
  SyncWrite,
  UserGroupLink,
  UserGroupSyncStore,
} from '../../domain/user-group-sync/user-group-sync.port.js';
import {
  syncStepEntry,
  syncStepFailure,
  syncStepLost,
  syncWriteRuns,
  type SyncRun,
} from '../../domain/user-group-sync/user-group-sync.rules.js';
import type { JsonObject } from '../../domain/common.records.js';
import type {
  BatchedUserGroupReads,
  UserGroupDeletion,
  UserGroupLookup,
  UserGroupLookupAnswer,
  UserGroupLookupKey,
  UserGroupQuery,
  UserGroupStore,
  UserGroupTokenRotation,
  UserGroupUpdate,
  UserGroupWrite,
} from '../../domain/user-groups/user-groups.port.js';
import {
  assertMergedSizeFromRow,
  MAX_ANCESTORS,
  mergedSizeChains,
  parentTeamIdFromRow,
  RULE_COUNT,
  userGroupFromRow,
} from '../user-group-records.js';
import {
  columnsFromPostgres,
  INSERT_COLUMNS,
  insertParameters,
  insertValues,
  patchAssignments,
  groupPatchParameters,
  pgNewGroupArrays,
  pgNewGroupKeys,
  pgNewGroupParameters,
  pgPatchArrays,
  selectList,
} from '../user-group-columns.js';
import type { MergedSizeRow, ParentLinkRow, UserGroupRow } from '../user-group-records.js';
import {
  assertTokenPatchComplete,
  mergedSizeWriteOfUpdate,
  type MergedSizeWrite,
} from '../../domain/user-groups/user-group-patch.rules.js';
import { userGroupSearchPlan } from '../../domain/user-groups/user-group-search.rules.js';
import { deletionRefusal } from '../../domain/user-groups/user-group-deletion.rules.js';
import {
  auditEventPerBatchRow,
  auditEventPerRow,
  auditParameters,
  batchAuditParameters,
  NO_ENDPOINT_WANTS,
  noEndpointWants,
  type AuditEvents,
} from './audit-events.js';
import { lookupBatch } from '../lookup-batch.js';
import { failure } from '../../domain/errors.js';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../../domain/retry-policy.js';
import { isParentLinkViolation, isStatementDefect, isTransientConflict } from './postgres-errors.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';
import { dataSourceRowId, schemaRowId } from '../catalogue-numbers.js';
import { IN_TEAM_ID_GAP, TEAM_ID_GAP_SQL } from '../team-id-gaps.js';
import { gapsAfterKeeping } from '../../domain/user-groups/team-ids.rules.js';
import type { Statement } from './statements.js';
import type { QueryResultRow } from 'pg';

/**
 * user_groups as node-postgres returns it (bigints as strings, timestamps as Dates, JSON parsed, tags
 * as an array), each column decoded as src/store/user-group-columns.ts describes. A row straight from
 * an insert has no ancestors column (a new group's ancestors are read back when it has a parent).
 */
export interface PostgresUserGroupColumns {
  [column: string]: unknown;
  team_id: Int8;
  provided_id: string;
  ancestors?: UserGroupRow['ancestors'];
}
export type PostgresUserGroupRow = PostgresUserGroupColumns & { mapping: UserGroupRow['mapping'] };

/** A row that came back as JSON (row_to_json): timestamps as text, which the decoder takes as Dates. */
function decodedJsonRow(row: PostgresUserGroupRow): PostgresUserGroupRow {
  return { ...row, created_at: new Date(row.created_at as string), updated_at: new Date(row.updated_at as string) };
}

export function decodeUserGroupRow(row: PostgresUserGroupRow): UserGroupRecord {
  return userGroupFromRow({ ...columnsFromPostgres(row), mapping: row.mapping, ancestors: row.ancestors ?? [] });
}

/** A group's columns, of `table` when given (the description's SELECT list). */
const groupColumns = (table?: string) => selectList('postgres', table);
const GROUP_COLUMNS = groupColumns();

// The mapping as the numbers of its schemas and data sources, which its rows keep (migration 0010):
// no join, so the plan is the mapping's primary key with or without statistics.
const mappingPairs = (team: string) => `(SELECT json_agg(json_build_array(m.schema_number, m.data_source_number))
  FROM user_group_mappings m WHERE m.team_id = ${team})`;

/** Mapping rows from the parallel number arrays, as row ids; a data source deleted since leaves NULL, which NOT NULL refuses. */
const mappingRowIds = (workspace: string) =>
  `${schemaRowId(workspace, 'm.schema_id')}, ${dataSourceRowId(workspace, 'm.data_source_id')}`;

const mappingOf = (table: string) => `COALESCE(${mappingPairs(`${table}.team_id`)}, '[]') AS mapping`;

/*
 * The ancestors ride along too, each with its level, provided id, properties and mapping: a recursive
 * walk up the parent links inside the same statement, bounded by the depth rule. A root (most groups)
 * skips the walk.
 */
const ancestorsOf = (table: string) => `CASE WHEN ${table}.parent_team_id IS NULL THEN '[]'::json ELSE (
  WITH RECURSIVE chain(team_id, parent_team_id, level, provided_id, properties, access_rules) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.provided_id, a.properties, a.access_rules FROM user_groups a WHERE a.team_id = ${table}.parent_team_id
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.provided_id, a.properties, a.access_rules
      FROM user_groups a JOIN chain c ON a.team_id = c.parent_team_id WHERE c.level < ${MAX_ANCESTORS})
  SELECT json_agg(json_build_array(c.level, c.provided_id, c.properties, ${mappingPairs('c.team_id')}, c.team_id, c.access_rules::text))
    FROM chain c
) END AS ancestors`;

// Mapping and ancestors ride along as JSON so that every lookup is a single statement.
export const SELECT_GROUP = `SELECT ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')} FROM user_groups g`;

/** Writes return the row they wrote, which saves a round trip to read it back. */
const RETURNING_GROUP = `RETURNING ${GROUP_COLUMNS}, ${mappingOf('user_groups')}, ${ancestorsOf('user_groups')}`;

/**
 * The new group's team_id: a requested one (an import's) that was never issued, above the sequence's
 * mark or in a gap the mark jumped over (team-ids.rules.ts), is kept; otherwise the next from the
 * sequence. Writes that may keep one lock the table first, so no create draws a number between this
 * check and the sequence's catching up.
 */
const TEAM_ID = `CASE WHEN @teamId::bigint IS NULL THEN nextval('user_groups_team_id_seq')
    WHEN @teamId::bigint > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM user_groups_team_id_seq)
    OR ${IN_TEAM_ID_GAP.replaceAll('@teamId', '@teamId::bigint')}
    THEN @teamId::bigint ELSE nextval('user_groups_team_id_seq') END`;
/** The sequence's mark: the highest team_id issued or kept. */
const TEAM_ID_MARK = 'SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS mark FROM user_groups_team_id_seq';

/** Before a batch that may keep team_ids: serialises it with every other insert into user_groups. */
const LOCK_FOR_TEAM_IDS = 'LOCK TABLE user_groups IN SHARE ROW EXCLUSIVE MODE';
/** After it: later team_ids are issued above every one kept. */
const ISSUE_ABOVE_KEPT = `SELECT setval('user_groups_team_id_seq', max(team_id)) FROM user_groups
  HAVING max(team_id) > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM user_groups_team_id_seq)`;

/**
 * Inserts a group and its mapping unless its provided id exists (or `condition` is false): the CTEs
 * `inserted` and `mapped`.
 */
const insertGroupSql = (condition = 'true') => `WITH inserted AS (
    INSERT INTO user_groups (${INSERT_COLUMNS})
    OVERRIDING SYSTEM VALUE
    SELECT ${insertValues('postgres', TEAM_ID)}
    WHERE ${condition}
    ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
    RETURNING ${GROUP_COLUMNS}
  ), mapped AS (
    INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
    SELECT inserted.team_id, ${mappingRowIds('inserted.workspace_id')}, m.schema_id, m.data_source_id
    FROM inserted CROSS JOIN unnest(@schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(schema_id, data_source_id)
  )`;

/** A patch applied if the row is still the version read; every patch shape is this one statement. */
const UPDATE_GROUP = `UPDATE user_groups SET
      ${patchAssignments('postgres')}
    WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
      AND version = @expectedVersion`;

const ROTATE = `UPDATE user_groups SET
      token_hash = @newTokenHash, token_ciphertext = @newTokenCiphertext,
      token_generation = token_generation + 1, version = version + 1, updated_at = @updatedAt
    WHERE token_hash = @currentTokenHash AND workspace_id = @workspaceId AND environment = @environment`;

/** The group to delete and its children, counted in the same statement; the CTE `target`. */
const DELETE_TARGET = `WITH target AS (
      SELECT t.team_id, (SELECT count(*) FROM user_groups c WHERE c.parent_team_id = t.team_id) AS children
      FROM user_groups t
      WHERE t.team_id = @teamId AND t.workspace_id = @workspaceId AND t.environment = @environment AND t.version = @expectedVersion
    )`;

const TENANT = 'g.workspace_id = @workspaceId AND g.environment = @environment';

/** First half of the advisory lock key of a tree's root (D442); "ugtt" in ASCII. */
const TREE_LOCK_CLASS = 0x75677474;
/**
 * The lock keys of the roots of the trees that hold the groups @teamIds and the groups @parentProvidedIds:
 * a walk up the parent links from each, bounded one level past the depth rule (which keeps every
 * chain shorter, so each walk ends at a root). The key folds in the schema, so that databases sharing
 * one PostgreSQL server in schemas of their own (tests, the bench) do not wait for each other's trees.
 */
const TREE_ROOTS = `up(team_id, parent_team_id, level) AS (
    SELECT team_id, parent_team_id, 1 FROM user_groups
      WHERE team_id = ANY(@teamIds::bigint[]) AND workspace_id = @workspaceId AND environment = @environment
    UNION ALL
    SELECT team_id, parent_team_id, 1 FROM user_groups
      WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = ANY(@parentProvidedIds::text[])
    UNION ALL
    SELECT p.team_id, p.parent_team_id, u.level + 1 FROM user_groups p JOIN up u ON p.team_id = u.parent_team_id
      WHERE u.level < ${HIERARCHY_READ_LIMIT}
  )`;
const ROOT_KEY = "hashtext(current_schema() || '.' || team_id)";
const TREE_ROOT_KEYS = `WITH RECURSIVE ${TREE_ROOTS} SELECT DISTINCT ${ROOT_KEY} AS key FROM up WHERE parent_team_id IS NULL`;

/** What the merged-size rule reads of a write's tree (mergedSizeChains' CTEs), as MergedSizeRow. */
const MERGED_SIZE_FACTS = `(SELECT provided_id FROM target) AS provided_id, (SELECT properties FROM target) AS own,
      (SELECT rules FROM target) AS own_rules,
      COALESCE((SELECT json_agg(json_build_array(level, properties, rules)) FROM old_chain), '[]') AS old_chain,
      COALESCE((SELECT json_agg(json_build_array(level, properties, rules)) FROM new_chain), '[]') AS new_chain,
      COALESCE((SELECT json_agg(json_build_array(level, team_id, parent_team_id, provided_id, properties, rules)) FROM subtree), '[]')
        AS subtree`;

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

/** A lookup's row: its group's columns (all null when there is none) beside the API token's state. */
type LookupRow = (PostgresUserGroupRow | { [column in keyof PostgresUserGroupRow]: null }) & ApiTokenStateColumns;

/** The creates of roots of one turn: every column an array, the tenant's too; no parent. */
const BATCH_ROOTS = pgNewGroupArrays({ parentTeamId: 'NULL' });
/** A sync run's creates: in the run's tenant, each with its checked parent. */
const RUN_CREATES = pgNewGroupArrays({ workspaceId: '@workspaceId::bigint', environment: '@environment::text' });
/** What both send of each new group besides the tenant and the parent. */
const NEW_GROUP_KEYS = pgNewGroupKeys({ workspaceId: '', environment: '', parentTeamId: '' });
/** A sync run's updates write what changes neither tree nor merged facts (the mapping goes after). */
const RUN_UPDATES = pgPatchArrays(['name', 'isDemoGroup', 'tags'], 'user_groups', 'u');

const sql = statements(
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
    // Walks the tenant in team_id order (index user_groups_tenant) and stops at the limit. The name
    // substring test makes any search a scan of the tenant; the provided-id prefix is a range because
    // that is exact for every string under the column's "C" collation. strpos() takes the search text
    // literally, so %, _ and backslash need no escaping; lower() folds case beyond ASCII on a database
    // with a UTF-8 locale. The tag as containment (@>), which the GIN index user_groups_tags serves.
    list: `${SELECT_GROUP}
    WHERE ${TENANT} AND g.team_id > @afterTeamId
      AND (@parent::text IS NULL OR g.parent_team_id = (SELECT p.team_id FROM user_groups p
        WHERE p.workspace_id = @workspaceId AND p.environment = @environment AND p.provided_id = @parent))
      AND (@tag::text IS NULL OR g.tags @> ARRAY[@tag::text])
      AND (@isDemoGroup::boolean IS NULL OR g.is_demo_group = @isDemoGroup)
      AND (@search::text IS NULL
        OR (g.provided_id >= @search AND (@searchEnd::text IS NULL OR g.provided_id < @searchEnd))
        OR strpos(lower(g.name), lower(@search)) > 0)
    ORDER BY g.team_id LIMIT @limit`,
    // The group and its mapping in one statement. ON CONFLICT DO NOTHING waits for a concurrent insert
    // of the same provided id to finish, then returns no row if it committed: exactly one caller creates.
    insert: `${insertGroupSql()} SELECT ${GROUP_COLUMNS} FROM inserted`,
    // The fast path of the hot write: group, mapping and audit event in one statement (atomic by
    // itself, no BEGIN and COMMIT round trips), taken only while no endpoint wants the event, which has
    // to be written with the whole group (a transaction: the paths below). Rotation and deletion have
    // theirs too.
    insertIfNoEndpointWants: `${insertGroupSql(NO_ENDPOINT_WANTS)}, ${auditEventPerRow('inserted')}
    SELECT ${GROUP_COLUMNS} FROM inserted`,
    // The creates of roots asked for in one turn, as one statement (D446): one row of unnest per
    // request (its batch_index, which also orders the team_ids drawn), each inserted while no endpoint
    // of its tenant wants the event and its provided id is free, with its mapping rows and its own audit
    // event. The caller sends each provided id of a tenant once, so a row joins back to one request.
    insertBatchIfNoEndpointWants: `WITH g AS (
      SELECT * FROM unnest(@indexes::int[], ${BATCH_ROOTS.arrays}) AS g(i, ${BATCH_ROOTS.aliases})
    ), inserted AS (
      INSERT INTO user_groups (${BATCH_ROOTS.columns})
      SELECT ${BATCH_ROOTS.values('g')}
      FROM g
      WHERE ${noEndpointWants('g.workspace_id', 'g.environment')}
      ORDER BY g.i
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
      RETURNING ${GROUP_COLUMNS}
    ), indexed AS (
      SELECT g.i AS batch_index, inserted.* FROM inserted
      JOIN g ON g.workspace_id = inserted.workspace_id AND g.environment = inserted.environment AND g.provided_id = inserted.provided_id
    ), mapped AS (
      INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
      SELECT i.team_id, ${mappingRowIds('i.workspace_id')}, m.schema_id, m.data_source_id
      FROM unnest(@mappedIndexes::int[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(i, schema_id, data_source_id)
      JOIN indexed i ON i.batch_index = m.i
    ), ${auditEventPerBatchRow('indexed')}
    SELECT * FROM indexed`,
    rotateIfNoEndpointWants: `WITH rotated AS (${ROTATE} AND ${NO_ENDPOINT_WANTS} ${RETURNING_GROUP}),
    ${auditEventPerRow('rotated')}
    SELECT ${GROUP_COLUMNS}, mapping, ancestors FROM rotated`,
    // The rotations of several requests asked for in one turn, as one statement (D445): one row of
    // unnest per request (batch_index), each rotated while no endpoint of its tenant wants the event,
    // with its own audit event. A token asked for twice matches its row once: one request rotates it.
    rotateBatchIfNoEndpointWants: `WITH r AS (
      SELECT * FROM unnest(@indexes::int[], @currentTokenHashes::text[], @newTokenHashes::text[], @newTokenCiphertexts::text[],
        @updatedAts::timestamptz[], @workspaceIds::bigint[], @environments::text[])
        AS r(i, current_token_hash, new_token_hash, new_token_ciphertext, updated_at, workspace_id, environment)
    ), rotated AS (
      UPDATE user_groups g SET token_hash = r.new_token_hash, token_ciphertext = r.new_token_ciphertext,
        token_generation = g.token_generation + 1, version = g.version + 1, updated_at = r.updated_at
      FROM r
      WHERE g.token_hash = r.current_token_hash AND g.workspace_id = r.workspace_id AND g.environment = r.environment
        AND ${noEndpointWants('r.workspace_id', 'r.environment')}
      RETURNING r.i AS batch_index, ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')}
    ), ${auditEventPerBatchRow('rotated')}
    SELECT batch_index, ${GROUP_COLUMNS}, mapping, ancestors FROM rotated`,
    deleteIfNoEndpointWants: `${DELETE_TARGET}, deleted AS (
      DELETE FROM user_groups g USING target
      WHERE g.team_id = target.team_id AND target.children = 0 AND g.version = @expectedVersion
        AND ${NO_ENDPOINT_WANTS}
      RETURNING g.team_id, g.workspace_id, g.environment, g.provided_id
    ), ${auditEventPerRow('deleted')}
    SELECT target.children, EXISTS (SELECT 1 FROM deleted) AS deleted FROM target`,
    // One statement for every patch shape: a field is written only when its flag is set.
    update: `${UPDATE_GROUP} ${RETURNING_GROUP}`,
    // The same with its audit event, as one statement (D444): a change that touches no tree and
    // sets no mapping needs no transaction at all, and one that does saves the audit round trip.
    // Taken only while no endpoint wants the event (its webhook event is written with the whole group).
    updateIfNoEndpointWants: `WITH updated AS (${UPDATE_GROUP} AND ${NO_ENDPOINT_WANTS} ${RETURNING_GROUP}),
    ${auditEventPerRow('updated')}
    SELECT ${GROUP_COLUMNS}, mapping, ancestors FROM updated`,
    // A concurrent rotation of the same token holds the row until it commits; this one then re-checks
    // the WHERE clause against the committed row, finds the old hash gone, and changes nothing.
    rotate: `${ROTATE} ${RETURNING_GROUP}`,
    // The children are counted in the same statement; a child linked by a transaction still open then
    // makes the foreign key refuse the delete once it commits, which the caller treats as "moved on".
    // RETURNING reads mapping and ancestors in the statement's snapshot, so the group comes back whole,
    // as it was: its webhook event shows it.
    delete: `${DELETE_TARGET}, deleted AS (
      DELETE FROM user_groups g USING target
      WHERE g.team_id = target.team_id AND target.children = 0 AND g.version = @expectedVersion
      RETURNING ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')}
    )
    SELECT target.children, (SELECT row_to_json(deleted) FROM deleted) AS deleted FROM target`,
    // Every change that can grow a merge (a link, a change of properties, a create under a
    // parent) first locks the roots of the trees it touches (D442): the root of the written group's
    // tree and of the would-be parent's, found by walking up the parent links (the depth rule bounds
    // the walk), each lock a key folded from the root's team_id (a collision only serialises more),
    // taken in key order within the statement. Writes on different trees of a tenant no longer wait
    // for each other; two writes on one tree (A under B, B under A included) decide one after the other.
    lockTreeRoots: `SELECT k.key, pg_advisory_xact_lock(${TREE_LOCK_CLASS}, k.key) AS locked
      FROM (${TREE_ROOT_KEYS} ORDER BY key) k`,
    // The same keys again, in a new snapshot: a tree that moved while this write waited has a new root.
    treeRootKeys: TREE_ROOT_KEYS,
    lockTreeKey: `SELECT pg_advisory_xact_lock(${TREE_LOCK_CLASS}, @key::int)`,
    // Syncs of one tenant one after the other (docs/api.md#sync-tenants-as-code), taken before the tree lock.
    // Tried, not waited for: another sync may hold it for longer than a statement may run.
    tryLockSync: `SELECT pg_try_advisory_xact_lock(hashtext('ugs.user_group_sync'), hashtext(@workspaceId::text || '.' || @environment)) AS locked`,
    // The would-be parent's chain up to the root and the height of the group's own subtree, bounded
    // one level past the depth rule: the walk stays SQL, the refusal is hierarchy.rules.ts' (D355).
    parentLink: `WITH RECURSIVE chain(team_id, parent_team_id, level) AS (
      SELECT team_id, parent_team_id, 1 FROM user_groups
        WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = @parentProvidedId
      UNION ALL
      SELECT u.team_id, u.parent_team_id, c.level + 1 FROM user_groups u JOIN chain c ON u.team_id = c.parent_team_id
        WHERE c.level < ${HIERARCHY_READ_LIMIT}
    ), subtree(team_id, level) AS (
      SELECT @teamId::bigint, 1 WHERE @teamId::bigint IS NOT NULL
      UNION ALL
      SELECT u.team_id, s.level + 1 FROM user_groups u JOIN subtree s ON u.parent_team_id = s.team_id
        WHERE s.level < ${HIERARCHY_READ_LIMIT}
    )
    SELECT COALESCE((SELECT json_agg(json_build_array(level, team_id)) FROM chain), '[]') AS chain,
      (SELECT COALESCE(max(level), 1) FROM subtree) AS height`,
    // What a write's change of merged properties is checked on (src/domain/user-groups/hierarchy.rules.ts decides).
    mergedSizes: `${mergedSizeChains({ bigint: '::bigint' })} SELECT ${MERGED_SIZE_FACTS}`,
    // The same, with the keys of the roots the write's trees have now (TREE_ROOT_KEYS, for @teamIds):
    // after the roots were locked, one round trip both confirms them and reads the facts (D444).
    mergedSizesUnderRoots: `${mergedSizeChains({ bigint: '::bigint' })}, ${TREE_ROOTS}
    SELECT (SELECT json_agg(DISTINCT ${ROOT_KEY}) FROM up WHERE parent_team_id IS NULL) AS root_keys, ${MERGED_SIZE_FACTS}`,
    lockForTeamIds: LOCK_FOR_TEAM_IDS,
    issueAboveKept: ISSUE_ABOVE_KEPT,
    teamIdMark: TEAM_ID_MARK,
    teamIdGapHolding: TEAM_ID_GAP_SQL.holding.replaceAll('@teamId', '@teamId::bigint'),
    removeTeamIdGap: TEAM_ID_GAP_SQL.remove.replace('@low', '@low::bigint'),
    addTeamIdGap: TEAM_ID_GAP_SQL.add.replace('@low', '@low::bigint').replace('@high', '@high::bigint'),
    // Each kept number raises the mark at once, so the next line of the batch is judged against it.
    raiseTeamIdMark: `SELECT setval('user_groups_team_id_seq', @teamId::bigint) FROM (${TEAM_ID_MARK}) m
      WHERE @teamId::bigint > m.mark`,
    // The mapping rows of one group or of many (a sync's run): one row per (team id, schema, data source).
    insertMappings: `INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
    SELECT m.team_id, ${mappingRowIds('@workspaceId::bigint')}, m.schema_id, m.data_source_id
    FROM unnest(@teamIds::bigint[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(team_id, schema_id, data_source_id)`,
    clearMappings: 'DELETE FROM user_group_mappings WHERE team_id = ANY(@teamIds::bigint[])',
    // A sync's run: the chain of each would-be parent up to its root, as parentLink and mergedSizes
    // read it for one create (a new group's subtree is itself: height 1, no old chain).
    parentChains: `WITH RECURSIVE chain(parent_provided_id, team_id, parent_team_id, level, properties, rules) AS (
      SELECT provided_id, team_id, parent_team_id, 1, properties, ${RULE_COUNT('access_rules')} FROM user_groups
        WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = ANY(@parentProvidedIds::text[])
      UNION ALL
      SELECT c.parent_provided_id, u.team_id, u.parent_team_id, c.level + 1, u.properties, ${RULE_COUNT('u.access_rules')}
        FROM user_groups u JOIN chain c ON u.team_id = c.parent_team_id WHERE c.level < ${HIERARCHY_READ_LIMIT}
    )
    SELECT parent_provided_id, json_agg(json_build_array(level, team_id, properties, rules)) AS chain
    FROM chain GROUP BY parent_provided_id`,
    // A sync's run: its creates in one statement, in the run's order, each with its mapping rows (the
    // flat arrays @mappedProvidedIds, @schemaIds, @dataSourceIds). A provided id that exists by now
    // (a concurrent create) inserts nothing, which refuses the sync. The ancestors of a group created
    // under a parent are those this transaction's earlier statements left.
    insertRun: `WITH inserted AS (
      INSERT INTO user_groups (${RUN_CREATES.columns})
      SELECT ${RUN_CREATES.values('g')}
      FROM unnest(${RUN_CREATES.arrays}) WITH ORDINALITY AS g(${RUN_CREATES.aliases}, n)
      ORDER BY g.n
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
      RETURNING ${GROUP_COLUMNS}, ${ancestorsOf('user_groups')}
    ), mapped AS (
      INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
      SELECT i.team_id, ${mappingRowIds('@workspaceId::bigint')}, m.schema_id, m.data_source_id
      FROM unnest(@mappedProvidedIds::text[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(provided_id, schema_id, data_source_id)
      JOIN inserted i ON i.provided_id = m.provided_id
    )
    SELECT * FROM inserted`,
    // A sync's run: its updates that change neither the tree nor merged properties or rules (name, demo
    // flag, tags; the mapping is written after), each only if its row still has the version the plan read.
    updateRun: `UPDATE user_groups SET
      ${RUN_UPDATES.assignments},
      version = user_groups.version + 1,
      updated_at = u.updated_at
    FROM unnest(@teamIds::bigint[], @expectedVersions::bigint[], ${RUN_UPDATES.arrays}, @updatedAts::timestamptz[])
      AS u(team_id, expected_version, ${RUN_UPDATES.aliases}, updated_at)
    WHERE user_groups.team_id = u.team_id AND user_groups.workspace_id = @workspaceId AND user_groups.environment = @environment
      AND user_groups.version = u.expected_version
    RETURNING user_groups.team_id`,
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
      WHERE ${TENANT} AND g.team_id > @afterTeamId AND g.tags @> ARRAY[@tag::text]
      ORDER BY g.team_id LIMIT @limit`,
  },
  { prepared: true },
);

/** A mapping as the two parallel arrays the statements unnest. */
function mappingParameters(mapping: MappingEntry[]): { schemaIds: number[]; dataSourceIds: number[] } {
  return {
    schemaIds: mapping.map((entry) => entry.schemaId),
    dataSourceIds: mapping.map((entry) => entry.dataSourceId),
  };
}

/** The mappings of several groups as three parallel arrays, each row led by its group's key. */
function mappingRows<K>(groups: Array<{ key: K; mapping: MappingEntry[] }>) {
  const rows = groups.flatMap(({ key, mapping }) => mapping.map((entry) => ({ key, entry })));
  return { keys: rows.map((row) => row.key), ...mappingParameters(rows.map((row) => row.entry)) };
}

type LinkRow = { team_id: Int8; provided_id: string; parent_team_id: Int8 | null };

const linksOf = (rows: LinkRow[]): UserGroupLink[] =>
  rows.map((row) => ({
    teamId: toNumber(row.team_id),
    providedId: row.provided_id,
    parentTeamId: row.parent_team_id === null ? null : toNumber(row.parent_team_id),
  }));

/** A sync's run is written this many steps to a statement, each far inside the statement timeout. */
const SYNC_RUN_STEPS = 1000;

type SyncCreate = Extract<SyncWrite, { kind: 'create' }>;

/** A cell of a would-be parent's chain (`parentChains`): level (1: the parent), team id, properties, rule count. */
type ParentChainCell = [number, number, JsonObject | null, number];

/** How long an apply waits for another sync of its tenant, in tries this far apart. */
const SYNC_LOCK_WAIT_MS = 120_000;
const SYNC_LOCK_PAUSE_MS = 50;

/**
 * How PostgreSQL writes a create, a token rotation or a deletion, decided here and nowhere else
 * (D443). Each has two writes, stated once each in `userGroupMethods`:
 * - `statement`: the change and its audit event as one statement (no BEGIN and COMMIT round trips),
 *   which writes nothing while an enabled endpoint of the tenant wants the event (NO_ENDPOINT_WANTS:
 *   its webhook event must be written with the whole group) or when it finds nothing to do; it then
 *   answers undefined;
 * - `transaction`: change, audit event and webhook events in one transaction (audit.withAudit), which
 *   decides afresh on the rows as they are then.
 * The store contract runs each operation with an endpoint that wants its event and with one that does
 * not (test/store/contract/webhook-outbox.contract.ts).
 */
interface TwoWayWrite<A extends unknown[], R> {
  statement(...args: A): Promise<R | undefined>;
  transaction(...args: A): Promise<R>;
}

const written =
  <A extends unknown[], R>(write: TwoWayWrite<A, R>) =>
  async (...args: A): Promise<R> =>
    (await write.statement(...args)) ?? write.transaction(...args);

interface CreateAsk {
  group: NewUserGroup;
  context: AuditContext;
}

interface RotationAsk {
  rotation: UserGroupTokenRotation;
  context: AuditContext;
}

/** New groups' columns as the parallel arrays of a multi-row `INSERT … SELECT FROM unnest(…)`. */
const newGroupColumns = (groups: NewUserGroup[]) => pgNewGroupParameters(groups, NEW_GROUP_KEYS);

type TreeRootsParameters = Tenant & { teamIds: number[]; parentProvidedIds: string[] };

const lostOnTransientConflict = (error: unknown): typeof LOST_TO_CONCURRENT_CHANGE => {
  if (isTransientConflict(error)) return LOST_TO_CONCURRENT_CHANGE;
  throw error;
};

export function userGroupMethods(
  db: PostgresDatabase,
  audit: AuditEvents,
): Omit<UserGroupStore, BatchedUserGroupReads> & UserGroupSyncStore {
  const findOne = async (q: Queryable, statement: Statement): Promise<UserGroupRecord | null> => {
    const [row] = await q.rows<PostgresUserGroupRow>(statement);
    return row ? decodeUserGroupRow(row) : null;
  };

  const findMany = async (q: Queryable, statement: Statement): Promise<UserGroupRecord[]> =>
    (await q.rows<PostgresUserGroupRow>(statement)).map(decodeUserGroupRow);

  const byProvidedId = (q: Queryable, tenant: Tenant, providedId: string) =>
    findOne(q, sql.byProvidedId({ ...tenant, providedId }));

  const lookupStatements = { providedId: sql.byProvidedIdLookups, tokenHash: sql.byTokenHashLookups };

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

  /** Locks the roots of the trees holding `teamIds` and the groups `parentProvidedIds` (D442); the keys it holds. */
  const lockTreeRoots = async (tx: Queryable, parameters: TreeRootsParameters) =>
    new Set((await tx.rows<{ key: number }>(sql.lockTreeRoots({ ...parameters }))).map((row) => row.key));

  /**
   * Of `keys` (the roots read again in a new snapshot, after the locks), locks those not held yet, in
   * key order: a tree that moved while this write waited has a new root. False when there were none,
   * so that the roots it holds are the trees' roots.
   */
  const lockMovedRoots = async (tx: Queryable, locked: Set<number>, keys: number[]): Promise<boolean> => {
    const moved = keys.filter((key) => !locked.has(key)).sort((a, b) => a - b);
    for (const key of moved) {
      await tx.rows(sql.lockTreeKey({ key }));
      locked.add(key);
    }
    return moved.length > 0;
  };

  /**
   * Inside a transaction: locks the roots of the trees holding `teamIds` and the groups
   * `parentProvidedIds` (D442), then reads them again in a new snapshot and locks any root that
   * changed while it waited (a tree moved), until the roots it holds are the trees' roots.
   */
  const lockTrees = async (tx: Queryable, tenant: Tenant, teamIds: number[], parentProvidedIds: string[]) => {
    const parameters = { ...tenant, teamIds, parentProvidedIds };
    const locked = await lockTreeRoots(tx, parameters);
    for (;;) {
      const keys = (await tx.rows<{ key: number }>(sql.treeRootKeys(parameters))).map((row) => row.key);
      if (!(await lockMovedRoots(tx, locked, keys))) return;
    }
  };

  /**
   * Inside a transaction: locks the trees a change of the parent link touches (the group's own, and
   * the would-be parent's), then checks the link (docs/api.md#hierarchy-demo-groups-and-tags) on the tree as it is now and returns the
   * parent's team id; null detaches, undefined leaves the link.
   */
  const parentTeamIdFor = async (
    tx: Queryable,
    tenant: Tenant,
    parentProvidedId: string | null | undefined,
    teamId?: number,
  ) => {
    if (parentProvidedId === undefined) return undefined;
    // A root's create (the hot path) touches no tree; a detach moves its subtree to a tree of its own.
    if (parentProvidedId === null && teamId === undefined) return null;
    await lockTrees(
      tx,
      tenant,
      teamId === undefined ? [] : [teamId],
      parentProvidedId === null ? [] : [parentProvidedId],
    );
    if (parentProvidedId === null) return null;
    const [row] = await tx.rows<ParentLinkRow>(sql.parentLink({ ...tenant, parentProvidedId, teamId: teamId ?? null }));
    if (!row) throw new Error('the parent-link query returned no row');
    return parentTeamIdFromRow(parentProvidedId, row, teamId);
  };

  /**
   * Inside a transaction, with the trees the write touches locked (which `locked` says the write
   * already did): refuses the write if it would grow some group's merged properties past the bound,
   * so that two writes on one tree decide one after the other.
   */
  const assertMergedSize = async (tx: Queryable, tenant: Tenant, write: MergedSizeWrite, locked: boolean) => {
    const facts = { ...tenant, teamId: write.teamId ?? null, parentTeamId: write.parentTeamId ?? null };
    if (locked || write.teamId === undefined) {
      const [row] = await tx.rows<MergedSizeRow>(sql.mergedSizes(facts));
      if (!row) throw new Error('the merged-size query returned no row');
      return assertMergedSizeFromRow(row, write);
    }
    // The roots of the group's tree, locked, then confirmed in the same statement that reads the facts:
    // lockTrees and the read above in one round trip fewer.
    const roots = { ...tenant, teamIds: [write.teamId], parentProvidedIds: [] };
    const held = await lockTreeRoots(tx, roots);
    for (;;) {
      const [row] = await tx.rows<MergedSizeRow & { root_keys: number[] | null }>(
        sql.mergedSizesUnderRoots({ ...facts, ...roots }),
      );
      if (!row) throw new Error('the merged-size query returned no row');
      if (!(await lockMovedRoots(tx, held, row.root_keys ?? []))) return assertMergedSizeFromRow(row, write);
    }
  };

  /**
   * Inserts the group and its mapping; undefined (and nothing written) when its provided id exists.
   * A group with a parent goes through `tx`, a transaction the caller opened: the parent is checked
   * under the tree lock first, and the new row (with its ancestors) is read back.
   */
  const insertGroup = async (
    q: Queryable,
    group: NewUserGroup,
    unannounced?: AuditContext,
  ): Promise<UserGroupRecord | undefined> => {
    const { tenant, providedId, parentProvidedId } = group;
    // The parent is checked only for a group that will be created; one that exists is left as it is.
    if (parentProvidedId !== null && (await byProvidedId(q, tenant, providedId))) return undefined;
    const parentTeamId = (await parentTeamIdFor(q, tenant, parentProvidedId)) ?? null;
    if (parentTeamId !== null)
      await assertMergedSize(
        q,
        tenant,
        { providedId, properties: group.properties, accessRules: group.accessRules.length, parentTeamId },
        true,
      );
    const parameters = { ...insertParameters('postgres', group, parentTeamId), ...mappingParameters(group.mapping) };
    const [inserted] = await q.rows<PostgresUserGroupColumns>(
      unannounced
        ? sql.insertIfNoEndpointWants({
            ...parameters,
            ...auditParameters(unannounced, groupAudit('user_group.created', unannounced.changes)),
          })
        : sql.insert(parameters),
    );
    if (inserted && parentProvidedId !== null)
      return (await findOne(q, sql.byTeamIdInTenant({ ...tenant, teamId: inserted.team_id }))) ?? undefined;
    // The statement's RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
    return (
      inserted &&
      decodeUserGroupRow({ ...inserted, mapping: group.mapping.map((entry) => [entry.schemaId, entry.dataSourceId]) })
    );
  };

  /** The patch's columns as the update statements take them. */
  const updateParameters = (
    { tenant, teamId, expectedVersion, patch, updatedAt }: UserGroupUpdate,
    parentTeamId: number | null | undefined,
  ) => ({
    ...tenant,
    teamId,
    expectedVersion,
    updatedAt,
    ...groupPatchParameters('postgres', { ...patch, parentTeamId }),
  });

  /**
   * Applies the patch if the row still has the expected version; undefined (and nothing written)
   * otherwise. Given `unannounced` (the audit context of a single update), the change and its audit
   * event are one statement while no endpoint wants the event (`audited`: the caller writes no entry);
   * when one does, the plain update follows, in the same transaction, and the caller writes the entry.
   */
  const applyUpdate = async (
    tx: Queryable,
    groupUpdate: UserGroupUpdate,
    unannounced?: AuditContext,
  ): Promise<{ group: UserGroupRecord; audited: boolean } | undefined> => {
    const { tenant, teamId, patch } = groupUpdate;
    assertTokenPatchComplete(patch);
    const parentTeamId = await parentTeamIdFor(tx, tenant, patch.parentProvidedId, teamId);
    const sizeCheck = mergedSizeWriteOfUpdate(teamId, patch, parentTeamId);
    // parentTeamIdFor locked the trees when the patch changes the link.
    if (sizeCheck) await assertMergedSize(tx, tenant, sizeCheck, parentTeamId !== undefined);
    const parameters = updateParameters(groupUpdate, parentTeamId);
    // A mapping is rewritten after the row, and only the plain update leaves room for that.
    if (unannounced && !patch.mapping) {
      const group = await findOne(
        tx,
        sql.updateIfNoEndpointWants({
          ...parameters,
          ...auditParameters(unannounced, groupAudit('user_group.updated', unannounced.changes)),
        }),
      );
      if (group) return { group, audited: true };
    }
    const [updated] = await tx.rows<PostgresUserGroupRow>(sql.update(parameters));
    if (!updated) return undefined;
    if (!patch.mapping) return { group: decodeUserGroupRow(updated), audited: false };
    await tx.rows(sql.clearMappings({ teamIds: [teamId] }));
    const { keys: teamIds, ...mapped } = mappingRows([{ key: teamId, mapping: patch.mapping }]);
    await tx.rows(sql.insertMappings({ workspaceId: tenant.workspaceId, teamIds, ...mapped }));
    // RETURNING showed the mapping as it was before this statement; the new one is the patch's.
    const mapping = patch.mapping.map((entry): [number, number] => [entry.schemaId, entry.dataSourceId]);
    return { group: decodeUserGroupRow({ ...updated, mapping }), audited: false };
  };

  /** Whether an update reads and locks nothing before its write: no link, no mapping, nothing merged grows. */
  const touchesNoTree = ({ teamId, patch }: UserGroupUpdate) =>
    patch.parentProvidedId === undefined &&
    patch.mapping === undefined &&
    mergedSizeWriteOfUpdate(teamId, patch, undefined) === undefined;

  const insertAudited = audit.withAudit(async (tx, context: AuditContext, group: NewUserGroup) => {
    const created = await insertGroup(tx, group);
    return {
      result: created,
      entries: created ? [groupEntry(groupAudit('user_group.created', context.changes), created)] : [],
    };
  });

  /**
   * A batch statement's rows (D445, D446), or null when it failed on its data (a conflict, a deadlock,
   * a refused mapping, a lost connection), so that each ask runs alone; a statement that cannot run
   * as written would otherwise fall back on every turn, unseen, and is thrown instead (D447).
   */
  const batchRows = async <R extends QueryResultRow>(statement: Statement): Promise<R[] | null> => {
    try {
      return await db.rows<R>(statement);
    } catch (error) {
      if (isStatementDefect(error)) throw error;
      return null;
    }
  };

  /**
   * The creates of roots asked for in one turn of the event loop (D446), as the rotations are (D445):
   * several go as one statement, one WAL flush and one round trip for all; a lone one, a create that
   * statement did not make (an endpoint wants the event, the provided id exists, or a later ask of a
   * provided id already in the statement) and every create of a batch whose statement failed run
   * alone as the one statement of D443, so that each outcome and each failure is its own request's
   * (and one that statement does not make either goes on to the transaction, as before). Each answer
   * is wrapped, so that a failure reaches only its own caller.
   */
  const createInTurn = lookupBatch(
    async (asks: CreateAsk[]): Promise<Array<{ outcome: Promise<UserGroupRecord | undefined> }>> => {
      const alone = ({ group, context }: CreateAsk) => ({ outcome: insertGroup(db, group, context) });
      // The first ask of each provided id in its tenant, by its index in `asks`.
      const firsts = new Map<string, number>();
      asks.forEach(({ group: { tenant, providedId } }, index) => {
        const key = `${tenant.workspaceId}\u0000${tenant.environment}\u0000${providedId}`;
        if (!firsts.has(key)) firsts.set(key, index);
      });
      const batch = [...firsts.values()];
      if (batch.length < 2) return asks.map(alone);
      const groups = batch.map((index) => asks[index]!.group);
      const { keys: mappedIndexes, ...mapped } = mappingRows(
        groups.map((group, position) => ({ key: position, mapping: group.mapping })),
      );
      const rows = await batchRows<PostgresUserGroupColumns & { batch_index: number }>(
        sql.insertBatchIfNoEndpointWants({
          indexes: groups.map((_, position) => position),
          workspaceIds: groups.map((group) => group.tenant.workspaceId),
          environments: groups.map((group) => group.tenant.environment),
          ...newGroupColumns(groups),
          mappedIndexes,
          ...mapped,
          ...batchAuditParameters(
            batch.map((index) => asks[index]!.context),
            batch.map((index) => groupAudit('user_group.created', asks[index]!.context.changes)),
          ),
        }),
      );
      if (rows === null) return asks.map(alone);
      const inserted = new Map(rows.map((row) => [batch[row.batch_index]!, row]));
      return asks.map((ask, index) => {
        const row = inserted.get(index);
        if (!row) return alone(ask);
        // RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
        const mapping = ask.group.mapping.map((entry): [number, number] => [entry.schemaId, entry.dataSourceId]);
        return { outcome: Promise.resolve(decodeUserGroupRow({ ...row, mapping })) };
      });
    },
  );

  // A root (the hot path) may be one statement, which writes nothing when the group exists; a group
  // with a parent is checked under its tree's lock, in the transaction. A root whose team_id an import
  // asks to keep is its own statement (TEAM_ID); other roots of one turn share one (D446).
  const create = written<[NewUserGroup, AuditContext], UserGroupRecord | undefined>({
    statement: async (group, context) =>
      group.parentProvidedId !== null
        ? undefined
        : group.teamId === undefined
          ? (await createInTurn({ group, context })).outcome
          : insertGroup(db, group, context),
    transaction: (group, context) => insertAudited(context, group),
  });

  // It tries again (under the one retry policy) when its insert lost a deadlock, or met a group that
  // is gone by the time it reads it (deleted in between): each try is a fresh statement snapshot.
  const insertIfAbsent = (group: NewUserGroup, context: AuditContext) => {
    // Made only when the retries give up: an Error's stack costs every create otherwise.
    let conflict: unknown;
    return retryWhileContended(
      async () => {
        let created: UserGroupRecord | undefined;
        try {
          created = await create(group, context);
        } catch (error) {
          if (!isTransientConflict(error)) throw error;
          conflict = error;
          return LOST_TO_CONCURRENT_CHANGE;
        }
        if (created) return { group: created, created: true };
        // The conflicting insert has committed by now (ON CONFLICT waited for it), and this read is a new
        // statement with a new snapshot.
        const existing = await byProvidedId(db, group.tenant, group.providedId);
        return existing ? { group: existing, created: false } : LOST_TO_CONCURRENT_CHANGE;
      },
      () =>
        (conflict as Error | undefined) ??
        failure.unavailable(new Error('user group insert kept conflicting with a row deleted before it could be read')),
    );
  };

  const updateAudited = audit.withAudit(async (tx, context: AuditContext, groupUpdate: UserGroupUpdate) => {
    const applied = await applyUpdate(tx, groupUpdate, context);
    if (!applied) return { result: null, entries: [] };
    const { group, audited } = applied;
    return {
      result: group,
      entries: audited ? [] : [groupEntry(groupAudit('user_group.updated', context.changes), group)],
    };
  });

  // An update that touches no tree (a rename, tags, a token swap…) is one statement, no transaction;
  // the rest, and any update an endpoint wants the event of, is the transaction (D444). A statement
  // that found another version wrote nothing either: the transaction then finds the same and answers
  // null, a lost race.
  const update = written<[AuditContext, UserGroupUpdate], UserGroupRecord | null>({
    statement: async (context, groupUpdate) => {
      if (!touchesNoTree(groupUpdate)) return undefined;
      assertTokenPatchComplete(groupUpdate.patch);
      const group = await findOne(
        db,
        sql.updateIfNoEndpointWants({
          ...updateParameters(groupUpdate, undefined),
          ...auditParameters(context, groupAudit('user_group.updated', context.changes)),
        }),
      );
      return group ?? undefined;
    },
    transaction: updateAudited,
  });

  /**
   * An import's create, under the table lock: a team_id kept from a gap or above the mark updates the
   * gaps (team-ids.rules.ts) and raises the mark. setval is not rolled back with the transaction: a
   * batch that fails leaves the numbers it jumped over unkept, never issued twice.
   */
  const insertKeepingTeamId = async (tx: Queryable, group: NewUserGroup): Promise<UserGroupRecord | undefined> => {
    const teamId = group.teamId;
    if (teamId === undefined) return insertGroup(tx, group);
    const [markRow] = await tx.rows<{ mark: Int8 }>(sql.teamIdMark());
    const mark = toNumber(markRow?.mark ?? 0);
    const created = await insertGroup(tx, group);
    if (created?.teamId !== teamId) return created;
    const [holding] = await tx.rows<{ low: Int8; high: Int8 }>(sql.teamIdGapHolding({ teamId }));
    const { remove, add } = gapsAfterKeeping(
      teamId,
      mark,
      holding ? { low: toNumber(holding.low), high: toNumber(holding.high) } : null,
    );
    if (remove) await tx.rows(sql.removeTeamIdGap({ low: remove.low }));
    for (const gap of add) await tx.rows(sql.addTeamIdGap({ ...gap }));
    await tx.rows(sql.raiseTeamIdMark({ teamId }));
    return created;
  };

  // The batch path of an import: no re-reads, one audit entry per write.
  const writeBatch = audit.withAudit(async (tx, _context: AuditContext, writes: UserGroupWrite[]) => {
    const entries: AuditEntry[] = [];
    const keepsTeamIds = writes.some((write) => write.kind === 'create' && write.group.teamId !== undefined);
    if (keepsTeamIds) await tx.rows(sql.lockForTeamIds());
    for (const write of writes) {
      entries.push(
        batchWriteEntry(
          write,
          write.kind === 'create'
            ? await insertKeepingTeamId(tx, write.group)
            : (await applyUpdate(tx, write.update))?.group,
        ),
      );
    }
    if (keepsTeamIds) await tx.rows(sql.issueAboveKept());
    return { result: undefined, entries };
  });

  /** One step of a sync written on its own, as the single operations write it. */
  const applySyncStep = async (tx: Queryable, tenant: Tenant, step: SyncWrite): Promise<AuditEntry> => {
    try {
      if (step.kind === 'delete') {
        const [outcome] = await tx.rows<{ children: Int8; deleted: PostgresUserGroupRow | null }>(
          sql.delete({ ...tenant, teamId: step.teamId, expectedVersion: step.expectedVersion }),
        );
        const children = outcome ? toNumber(outcome.children) : 0;
        if (deletionRefusal(children)) throw failure.hasChildren(step.providedId, children);
        const group = outcome?.deleted ? decodeUserGroupRow(decodedJsonRow(outcome.deleted)) : undefined;
        return syncStepEntry(step, group, () => group!);
      }
      const row =
        step.kind === 'create' ? await insertGroup(tx, step.group) : (await applyUpdate(tx, step.update))?.group;
      return syncStepEntry(step, row, () => row!);
    } catch (error) {
      throw syncStepFailure(step, error);
    }
  };

  /**
   * A run of a sync's steps (D415, `syncWriteRuns`) in a few statements whatever its length: the
   * trees of the creates' parents locked and their chains read, its updates written, its creates
   * checked on those chains, then written up to the first that a check refuses. The run then fails at
   * its first step in the plan's order that wrote nothing or was refused, as writing the steps one by
   * one would (a line's refusal naming its line); else its audit entries come in the plan's order.
   */
  const applySyncRun = async (
    tx: Queryable,
    tenant: Tenant,
    { updates, creates, steps }: Extract<SyncRun<NewUserGroup>, { kind: 'batch' }>,
  ): Promise<AuditEntry[]> => {
    const parents = [
      ...new Set(creates.flatMap(({ group }) => (group.parentProvidedId === null ? [] : [group.parentProvidedId]))),
    ];
    const chains = new Map<string, ParentChainCell[]>();
    if (parents.length > 0) {
      await lockTrees(tx, tenant, [], parents);
      const rows = await tx.rows<{ parent_provided_id: string; chain: ParentChainCell[] }>(
        sql.parentChains({ ...tenant, parentProvidedIds: parents }),
      );
      for (const row of rows) chains.set(row.parent_provided_id, row.chain);
    }
    const updated = new Map<number, UserGroupRecord>();
    if (updates.length > 0) await writeSyncUpdates(tx, tenant, updates, updated);

    // The creates' checks, up to the first refusal: the creates before it are written, as one by one.
    const checked: Array<{ group: NewUserGroup; parentTeamId: number | null }> = [];
    let refused: { step: SyncCreate; error: unknown } | undefined;
    for (const step of creates) {
      try {
        checked.push({ group: step.group, parentTeamId: parentOfCreate(step.group, chains) });
      } catch (error) {
        refused = { step, error };
        break;
      }
    }
    const created = await insertSyncCreates(tx, tenant, checked);

    const entries: AuditEntry[] = [];
    for (const step of steps) {
      if (step === refused?.step) {
        // One by one, a create whose provided id exists by now is not checked: the plan moved on.
        const exists = await byProvidedId(tx, tenant, refused.step.group.providedId);
        throw syncStepFailure(step, exists ? syncStepLost(step) : refused.error);
      }
      const group =
        step.kind === 'create'
          ? created.get(step.group.providedId)
          : step.kind === 'update'
            ? updated.get(step.update.teamId)
            : undefined;
      try {
        entries.push(syncStepEntry(step, group, () => group!));
      } catch (error) {
        throw syncStepFailure(step, error);
      }
    }
    return entries;
  };

  /**
   * A run's creates, checked, in one statement with their mappings; each created group by its provided
   * id (one whose provided id exists by now is absent).
   */
  const insertSyncCreates = async (
    tx: Queryable,
    tenant: Tenant,
    creates: Array<{ group: NewUserGroup; parentTeamId: number | null }>,
  ): Promise<Map<string, UserGroupRecord>> => {
    const created = new Map<string, UserGroupRecord>();
    if (creates.length === 0) return created;
    const groups = creates.map(({ group }) => group);
    const { keys: mappedProvidedIds, ...mapped } = mappingRows(
      groups.map((group) => ({ key: group.providedId, mapping: group.mapping })),
    );
    const rows = await tx.rows<PostgresUserGroupColumns>(
      sql.insertRun({
        ...tenant,
        ...newGroupColumns(groups),
        parentTeamIds: creates.map(({ parentTeamId }) => parentTeamId),
        mappedProvidedIds,
        ...mapped,
      }),
    );
    const mappings = new Map(groups.map((group) => [group.providedId, group.mapping]));
    for (const row of rows) {
      // RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
      const mapping = (mappings.get(row.provided_id) ?? []).map((entry): [number, number] => [
        entry.schemaId,
        entry.dataSourceId,
      ]);
      created.set(row.provided_id, decodeUserGroupRow({ ...row, mapping }));
    }
    return created;
  };

  /**
   * The parent a create of a run links to (null: a root), once the rules have checked the link and the
   * merged bounds on the would-be parent's chain as this transaction reads it (parentLink and
   * mergedSizes for one create: a new group's subtree is itself alone).
   */
  const parentOfCreate = (group: NewUserGroup, chains: Map<string, ParentChainCell[]>): number | null => {
    if (group.parentProvidedId === null) return null;
    const chain = chains.get(group.parentProvidedId) ?? [];
    const parentTeamId = parentTeamIdFromRow(
      group.parentProvidedId,
      { chain: chain.map(([level, teamId]) => [level, teamId]), height: 1 },
      undefined,
    );
    assertMergedSizeFromRow(
      {
        provided_id: null,
        own: null,
        own_rules: null,
        old_chain: [],
        new_chain: chain
          .filter(([level]) => level <= MAX_ANCESTORS)
          .map(([level, , properties, rules]) => [level, properties, rules]),
        subtree: [],
      },
      {
        providedId: group.providedId,
        properties: group.properties,
        accessRules: group.accessRules.length,
        parentTeamId,
      },
    );
    return parentTeamId;
  };

  /**
   * A run's updates: one statement for the rows still at the version the plan read, their new mappings
   * in two more, then the written groups read back (each as the run leaves it, ancestors included) into
   * `updated`; a row that moved on is absent.
   */
  const writeSyncUpdates = async (
    tx: Queryable,
    tenant: Tenant,
    updates: Array<Extract<SyncWrite, { kind: 'update' }>>,
    updated: Map<number, UserGroupRecord>,
  ) => {
    const patches = updates.map(({ update }) => update);
    const rows = await tx.rows<{ team_id: Int8 }>(
      sql.updateRun({
        ...tenant,
        teamIds: patches.map((update) => update.teamId),
        expectedVersions: patches.map((update) => update.expectedVersion),
        ...RUN_UPDATES.parameters(patches.map((update) => update.patch)),
        updatedAts: patches.map((update) => update.updatedAt),
      }),
    );
    const written = new Set(rows.map((row) => toNumber(row.team_id)));
    if (written.size === 0) return;
    const remapped = patches.flatMap(({ teamId, patch }) =>
      patch.mapping !== undefined && written.has(teamId) ? [{ key: teamId, mapping: patch.mapping }] : [],
    );
    if (remapped.length > 0) {
      await tx.rows(sql.clearMappings({ teamIds: remapped.map(({ key }) => key) }));
      const { keys: teamIds, ...mapped } = mappingRows(remapped);
      await tx.rows(sql.insertMappings({ workspaceId: tenant.workspaceId, teamIds, ...mapped }));
    }
    for (const group of await findMany(tx, sql.byTeamIds({ ...tenant, teamIds: [...written] })))
      updated.set(group.teamId, group);
  };

  // A sync (docs/api.md#sync-tenants-as-code): under the tenant's sync lock, the steps in the plan's order, in runs written a
  // few statements each (D415) and, for deletes and the updates that move a group or change what its
  // tree merges, one by one. Each locks the roots of the trees it touches as the single operations do
  // (D442) and holds them to the end, so every parent and merged-size check reads a tree no other
  // write changes; the first refusal rolls all of it back, and a deadlock with another writer runs the
  // whole transaction again. Up to 10 000 audit entries: written 500 to a statement, each far inside
  // the statement timeout.
  const applySync = audit.withChunkedAudit(
    500,
    async (tx, _context: AuditContext, tenant: Tenant, steps: SyncWrite[], signal: AbortSignal | undefined) => {
      // Waits for another sync of the tenant in short tries, each far inside the statement timeout.
      for (const deadline = Date.now() + SYNC_LOCK_WAIT_MS; ;) {
        const [row] = await tx.rows<{ locked: boolean }>(sql.tryLockSync({ ...tenant }));
        if (row?.locked) break;
        if (Date.now() > deadline) throw failure.syncPlanMoved();
        await new Promise((resolve) => setTimeout(resolve, SYNC_LOCK_PAUSE_MS));
      }
      // No tenant-wide tree lock (D442): each run or step locks the roots of the trees it touches, as
      // the single operations do, and holds them to the end of the apply.
      const entries: AuditEntry[] = [];
      for (const run of syncWriteRuns(steps, SYNC_RUN_STEPS)) {
        // Stopped (the server stops, the client has gone): the transaction rolls back, nothing written.
        if (signal?.aborted) throw failure.syncStopped();
        if (run.kind === 'single') entries.push(await applySyncStep(tx, tenant, run.step));
        else entries.push(...(await applySyncRun(tx, tenant, run)));
      }
      return { result: undefined, entries };
    },
  );

  const list = (query: UserGroupQuery): Promise<UserGroupRecord[]> => {
    return findMany(db, sql.list({ ...query.tenant, ...userGroupSearchPlan(query) }));
  };

  const rotationParameters = ({
    tenant,
    currentTokenHash,
    newTokenHash,
    newTokenCiphertext,
    updatedAt,
  }: UserGroupTokenRotation) => ({
    ...tenant,
    currentTokenHash,
    newTokenHash,
    newTokenCiphertext,
    updatedAt,
  });

  const rotateAnnounced = audit.withAudit(async (tx, context: AuditContext, rotation: UserGroupTokenRotation) => {
    const group = await findOne(tx, sql.rotate(rotationParameters(rotation)));
    return {
      result: group,
      entries: group ? [groupEntry(groupAudit('user_group.token_rotated', context.changes), group)] : [],
    };
  });

  // The transaction also answers an unknown token (null).
  const rotate = written<[UserGroupTokenRotation, AuditContext], UserGroupRecord | null>({
    statement: async (rotation, context) =>
      (await findOne(
        db,
        sql.rotateIfNoEndpointWants({
          ...rotationParameters(rotation),
          ...auditParameters(context, groupAudit('user_group.token_rotated', context.changes)),
        }),
      )) ?? undefined,
    transaction: (rotation, context) => rotateAnnounced(context, rotation),
  });

  const deleteAudited = audit.withAudit(
    async (tx, context: AuditContext, tenant: Tenant, teamId: number, expectedVersion: number) => {
      const [outcome] = await tx.rows<{ children: Int8; deleted: PostgresUserGroupRow | null }>(
        sql.delete({ ...tenant, teamId, expectedVersion }),
      );
      const refusal = deletionRefusal(outcome ? toNumber(outcome.children) : 0);
      if (refusal) return { result: refusal, entries: [] };
      if (!outcome?.deleted) return { result: { status: 'moved' } as UserGroupDeletion, entries: [] };
      const group = decodeUserGroupRow(decodedJsonRow(outcome.deleted));
      return {
        result: { status: 'deleted' } as UserGroupDeletion,
        entries: [groupEntry(groupAudit('user_group.deleted', context.changes), group)],
      };
    },
  );

  const deletion = written<[Tenant, number, number, AuditContext], UserGroupDeletion>({
    // Answers a refusal (children, another version) itself; a deletion an endpoint wants goes on.
    statement: async (tenant, teamId, expectedVersion, context) => {
      const [outcome] = await db.rows<{ children: Int8; deleted: boolean }>(
        sql.deleteIfNoEndpointWants({
          ...tenant,
          teamId,
          expectedVersion,
          ...auditParameters(context, groupAudit('user_group.deleted', context.changes)),
        }),
      );
      if (!outcome) return { status: 'moved' };
      const refusal = deletionRefusal(toNumber(outcome.children));
      if (refusal) return refusal;
      return outcome.deleted ? { status: 'deleted' } : undefined;
    },
    transaction: (tenant, teamId, expectedVersion, context) => deleteAudited(context, tenant, teamId, expectedVersion),
  });

  const remove = async (
    tenant: Tenant,
    teamId: number,
    expectedVersion: number,
    context: AuditContext,
  ): Promise<UserGroupDeletion> => {
    try {
      return await deletion(tenant, teamId, expectedVersion, context);
    } catch (error) {
      // A child was linked while this statement ran: the next read counts it.
      if (isParentLinkViolation(error)) return { status: 'moved' };
      throw error;
    }
  };

  /**
   * The rotations asked for in one turn of the event loop (D445), as the reads are (lookup-batch.ts):
   * several go as one statement, one WAL flush and one round trip for all; a lone one, a rotation
   * that statement did not make (an endpoint wants the event, the token is gone) and every rotation
   * of a batch whose statement failed go on alone, as before, so that each outcome and each failure
   * is its own request's. Each answer is wrapped, so that a failure reaches only its own caller.
   */
  const rotateInTurn = lookupBatch(
    async (asks: RotationAsk[]): Promise<Array<{ outcome: Promise<UserGroupRecord | null> }>> => {
      const alone = ({ rotation, context }: RotationAsk) => ({ outcome: rotate(rotation, context) });
      if (asks.length === 1) return asks.map(alone);
      const rows = await batchRows<PostgresUserGroupRow & { batch_index: number }>(
        sql.rotateBatchIfNoEndpointWants({
          indexes: asks.map((_, index) => index),
          currentTokenHashes: asks.map((ask) => ask.rotation.currentTokenHash),
          newTokenHashes: asks.map((ask) => ask.rotation.newTokenHash),
          newTokenCiphertexts: asks.map((ask) => ask.rotation.newTokenCiphertext),
          updatedAts: asks.map((ask) => ask.rotation.updatedAt),
          workspaceIds: asks.map((ask) => ask.rotation.tenant.workspaceId),
          environments: asks.map((ask) => ask.rotation.tenant.environment),
          ...batchAuditParameters(
            asks.map((ask) => ask.context),
            asks.map((ask) => groupAudit('user_group.token_rotated', ask.context.changes)),
          ),
        }),
      );
      if (rows === null) return asks.map(alone);
      const rotated = new Map(rows.map((row) => [row.batch_index, row]));
      return asks.map((ask, index) => {
        const row = rotated.get(index);
        // Not rotated by the statement: the transaction decides afresh (an endpoint's event, or null).
        return { outcome: row ? Promise.resolve(decodeUserGroupRow(row)) : rotateAnnounced(ask.context, ask.rotation) };
      });
    },
  );

  return {
    lookUpUserGroups: lookUp,
    findUserGroupsByProvidedIds: (tenant, providedIds) => findMany(db, sql.byProvidedIds({ ...tenant, providedIds })),
    findUserGroupByTeamId: (tenant, teamId) => findOne(db, sql.byTeamIdInTenant({ ...tenant, teamId })),
    listUserGroups: list,
    // Two writes that each found a tree moved under them may wait for each other's roots: PostgreSQL
    // ends one with a deadlock, which changed nothing; it is a lost race like any other (D442).
    writeUserGroups: (writes, context) =>
      retryWhileContended(
        () => writeBatch(context, writes).catch(lostOnTransientConflict),
        () => failure.unavailable(new Error('a user group batch kept deadlocking')),
      ),
    listUserGroupChildren: async (tenant, parentTeamIds) =>
      linksOf(await db.rows<LinkRow>(sql.childLinks({ ...tenant, teamIds: parentTeamIds }))),
    listTaggedUserGroupLinks: async (tenant, tag, { afterTeamId, limit }) =>
      linksOf(await db.rows<LinkRow>(sql.taggedLinks({ ...tenant, tag, afterTeamId: afterTeamId ?? 0, limit }))),
    applyUserGroupSync: (tenant, steps, context, signal) => applySync(context, tenant, steps, signal),
    insertUserGroupIfAbsent: insertIfAbsent,
    // A lost race (null): the service reads and decides again.
    updateUserGroup: (groupUpdate, context) =>
      update(context, groupUpdate).catch((error: unknown) =>
        isTransientConflict(error) ? null : Promise.reject(error),
      ),
    rotateUserGroupToken: async (rotation, context) => (await rotateInTurn({ rotation, context })).outcome,
    deleteUserGroup: remove,
  };
}
