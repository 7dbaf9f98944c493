import { HIERARCHY_READ_LIMIT } from '../../../domain/user-groups/hierarchy.rules.js';
import type { Tenant } from '../../../domain/tenancy.js';
import { assertMergedSizeFromRow, mergedSizeChains, parentTeamIdFromRow } from '../../user-group-records.js';
import type { MergedSizeRow, ParentLinkRow } from '../../user-group-records.js';
import { type MergedSizeWrite } from '../../../domain/user-groups/user-group-patch.rules.js';
import type { Queryable } from '../postgres-database.js';
import { statements } from '../statements.js';

/** First half of the advisory lock key of a tree's root (docs/adr/0012-tree-root-locks.md); "ugtt" in ASCII. */
const TREE_LOCK_CLASS = 0x75677474;
/**
 * The lock keys of the roots of the trees that hold the groups @teamIds and the groups @parentProvidedIds:
 * a walk up the parent links from each, bounded one level past the depth rule (which keeps every
 * chain shorter, so each walk ends at a root). The key folds in the schema, so that databases sharing
 * one PostgreSQL server in schemas of their own (tests, the bench) do not wait for each other's trees.
 */
// Both starts take one index whatever the statistics, as the hot reads do: the team ids their primary
// key (the tenant compared with IS NOT DISTINCT FROM, which no index serves), the provided ids one
// bounded lookup each. With `=` and `= ANY` a table never analysed was read through the tenant index,
// every group of the tenant, twice a change (docs/performance.md, "What else a fresh database cost").
const TREE_ROOTS = `up(team_id, parent_team_id, level) AS (
    SELECT team_id, parent_team_id, 1 FROM user_groups
      WHERE team_id = ANY(@teamIds::bigint[])
        AND (workspace_id, environment) IS NOT DISTINCT FROM (@workspaceId::bigint, @environment::text)
    UNION ALL
    SELECT p.team_id, p.parent_team_id, 1 FROM unnest(@parentProvidedIds::text[]) AS k(key)
      CROSS JOIN LATERAL (SELECT g.team_id, g.parent_team_id FROM user_groups g
        WHERE g.workspace_id = @workspaceId AND g.environment = @environment
          AND g.provided_id >= k.key AND g.provided_id <= k.key ORDER BY g.provided_id LIMIT 1) p
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

/** The locks of trees and the facts the hierarchy rules decide on. */
export const treeSql = statements(
  {
    // Every change that can grow a merge (a link, a change of properties, a create under a
    // parent) first locks the roots of the trees it touches (docs/adr/0012-tree-root-locks.md): the root of the written group's
    // tree and of the would-be parent's, found by walking up the parent links (the depth rule bounds
    // the walk), each lock a key folded from the root's team_id (a collision only serialises more),
    // taken in key order within the statement. Writes on different trees of a tenant no longer wait
    // for each other; two writes on one tree (A under B, B under A included) decide one after the other.
    lockTreeRoots: `SELECT k.key, pg_advisory_xact_lock(${TREE_LOCK_CLASS}, k.key) AS locked
      FROM (${TREE_ROOT_KEYS} ORDER BY key) k`,
    // The same keys again, in a new snapshot: a tree that moved while this write waited has a new root.
    treeRootKeys: TREE_ROOT_KEYS,
    lockTreeKey: `SELECT pg_advisory_xact_lock(${TREE_LOCK_CLASS}, @key::int)`,
    // The would-be parent's chain up to the root and the height of the group's own subtree, bounded
    // one level past the depth rule: the walk stays SQL, the refusal is hierarchy.rules.ts' (docs/adr/0021-rules-modules-and-domain-ports.md).
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
    // after the roots were locked, one round trip both confirms them and reads the facts (docs/adr/0019-postgresql-group-writes.md).
    mergedSizesUnderRoots: `${mergedSizeChains({ bigint: '::bigint' })}, ${TREE_ROOTS}
    SELECT (SELECT json_agg(DISTINCT ${ROOT_KEY}) FROM up WHERE parent_team_id IS NULL) AS root_keys, ${MERGED_SIZE_FACTS}`,
  },
  { prepared: true },
);

type TreeRootsParameters = Tenant & { teamIds: number[]; parentProvidedIds: string[] };

/** Locks the roots of the trees holding `teamIds` and the groups `parentProvidedIds` (docs/adr/0012-tree-root-locks.md); the keys it holds. */
const lockTreeRoots = async (tx: Queryable, parameters: TreeRootsParameters) =>
  new Set((await tx.rows<{ key: number }>(treeSql.lockTreeRoots({ ...parameters }))).map((row) => row.key));

/**
 * Of `keys` (the roots read again in a new snapshot, after the locks), locks those not held yet, in
 * key order: a tree that moved while this write waited has a new root. False when there were none,
 * so that the roots it holds are the trees' roots.
 */
const lockMovedRoots = async (tx: Queryable, locked: Set<number>, keys: number[]): Promise<boolean> => {
  const moved = keys.filter((key) => !locked.has(key)).sort((a, b) => a - b);
  for (const key of moved) {
    await tx.rows(treeSql.lockTreeKey({ key }));
    locked.add(key);
  }
  return moved.length > 0;
};

/**
 * Inside a transaction: locks the roots of the trees holding `teamIds` and the groups
 * `parentProvidedIds` (docs/adr/0012-tree-root-locks.md), then reads them again in a new snapshot and locks any root that
 * changed while it waited (a tree moved), until the roots it holds are the trees' roots.
 */
export const lockTrees = async (tx: Queryable, tenant: Tenant, teamIds: number[], parentProvidedIds: string[]) => {
  const parameters = { ...tenant, teamIds, parentProvidedIds };
  const locked = await lockTreeRoots(tx, parameters);
  for (;;) {
    const keys = (await tx.rows<{ key: number }>(treeSql.treeRootKeys(parameters))).map((row) => row.key);
    if (!(await lockMovedRoots(tx, locked, keys))) return;
  }
};

/**
 * Inside a transaction: locks the trees a change of the parent link touches (the group's own, and
 * the would-be parent's), then checks the link (docs/api.md#hierarchy-demo-groups-and-tags) on the tree as it is now and returns the
 * parent's team id; null detaches, undefined leaves the link.
 */
export const parentTeamIdFor = async (
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
  const [row] = await tx.rows<ParentLinkRow>(
    treeSql.parentLink({ ...tenant, parentProvidedId, teamId: teamId ?? null }),
  );
  if (!row) throw new Error('the parent-link query returned no row');
  return parentTeamIdFromRow(parentProvidedId, row, teamId);
};

/**
 * Inside a transaction, with the trees the write touches locked (which `locked` says the write
 * already did): refuses the write if it would grow some group's merged properties past the bound,
 * so that two writes on one tree decide one after the other.
 */
export const assertMergedSize = async (tx: Queryable, tenant: Tenant, write: MergedSizeWrite, locked: boolean) => {
  const facts = { ...tenant, teamId: write.teamId ?? null, parentTeamId: write.parentTeamId ?? null };
  if (locked || write.teamId === undefined) {
    const [row] = await tx.rows<MergedSizeRow>(treeSql.mergedSizes(facts));
    if (!row) throw new Error('the merged-size query returned no row');
    return assertMergedSizeFromRow(row, write);
  }
  // The roots of the group's tree, locked, then confirmed in the same statement that reads the facts:
  // lockTrees and the read above in one round trip fewer.
  const roots = { ...tenant, teamIds: [write.teamId], parentProvidedIds: [] };
  const held = await lockTreeRoots(tx, roots);
  for (;;) {
    const [row] = await tx.rows<MergedSizeRow & { root_keys: number[] | null }>(
      treeSql.mergedSizesUnderRoots({ ...facts, ...roots }),
    );
    if (!row) throw new Error('the merged-size query returned no row');
    if (!(await lockMovedRoots(tx, held, row.root_keys ?? []))) return assertMergedSizeFromRow(row, write);
  }
};
