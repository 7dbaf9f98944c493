import type { ApiTokenCheck } from '../domain/api-tokens/api-token-check.js';
import { admitWithLookup, tokenToConfirm } from '../domain/api-tokens/api-token-admission.js';
import type { DataSourceRecord } from '../domain/data-sources/data-source.records.js';
import type { SchemaRecord } from '../domain/schemas/schema.records.js';
import type { UserGroupRecord } from '../domain/user-groups/user-group.records.js';
import type { Tenant } from '../domain/tenancy.js';
import { lookupBatch } from './lookup-batch.js';
import type { DataSourceRefs, DataSourceStore } from '../domain/data-sources/data-sources.port.js';
import type { SchemaStore } from '../domain/schemas/schemas.port.js';
import type {
  BatchedUserGroupReads,
  UserGroupLookup,
  UserGroupLookupAnswer,
  UserGroupStore,
} from '../domain/user-groups/user-groups.port.js';

/**
 * The hot reads (get-or-create of an existing group, verify) of both engines: the finds asked for in
 * one turn of the event loop go to the engine as one lookUpUserGroups, each with its caller's API
 * token to confirm in the same snapshot when its check is unsettled, and each check is settled from
 * its own answer. One snapshot and one round trip per turn instead of one each: on PostgreSQL one
 * statement, on SQLite one read transaction (docs/performance.md).
 */
export function batchedUserGroupReads(
  lookUp: UserGroupStore['lookUpUserGroups'],
): Pick<UserGroupStore, BatchedUserGroupReads> {
  const byProvidedId = lookupBatch((lookups: UserGroupLookup[]) => lookUp('providedId', lookups));
  const byTokenHash = lookupBatch((lookups: UserGroupLookup[]) => lookUp('tokenHash', lookups));

  const find = async (
    batch: (lookup: UserGroupLookup) => Promise<UserGroupLookupAnswer>,
    tenant: Tenant,
    key: string,
    check: ApiTokenCheck | undefined,
  ): Promise<UserGroupRecord | null> => {
    // What to confirm, and what the answer means, are the admission's (api-token-admission.ts, step 3).
    const apiToken = tokenToConfirm(check);
    const answer = await batch(apiToken ? { tenant, key, apiToken } : { tenant, key });
    // The request is admitted before its group is handed over: an operation never admits it itself.
    if (check) await admitWithLookup(check, apiToken ? (answer.apiToken ?? null) : undefined);
    return answer.group;
  };

  return {
    findUserGroupByProvidedId: (tenant, providedId, check) => find(byProvidedId, tenant, providedId, check),
    findUserGroupByTokenHash: (tenant, tokenHash, check) => find(byTokenHash, tenant, tokenHash, check),
  };
}

type CatalogueReads = Pick<SchemaStore, 'findSchemasByIds'> & Pick<DataSourceStore, 'findDataSources'>;

/** The asks of one batch grouped by `keyOf`, each group answered by one `read` of all its asks together. */
async function answeredTogether<A, R>(
  asks: A[],
  keyOf: (ask: A) => string,
  read: (group: A[]) => Promise<R[]>,
  answer: (ask: A, found: R[]) => R[],
): Promise<R[][]> {
  const groups = new Map<string, A[]>();
  for (const ask of asks) {
    const key = keyOf(ask);
    const group = groups.get(key);
    if (group) group.push(ask);
    else groups.set(key, [ask]);
  }
  const found = new Map<string, R[]>();
  await Promise.all([...groups].map(async ([key, group]) => found.set(key, await read(group))));
  return asks.map((ask) => answer(ask, found.get(keyOf(ask))!));
}

/**
 * The catalogue reads of a create's mapping (src/domain/user-groups/mapping.ts), batched the same way: the
 * schemas that the creates of one turn name are read by one statement per workspace, their data
 * sources by one per tenant, and each create gets exactly the records its own references match.
 */
export function batchedCatalogueReads(store: CatalogueReads): CatalogueReads {
  const schemas = lookupBatch((asks: Array<{ workspaceId: number; ids: number[] }>) =>
    answeredTogether(
      asks,
      (ask) => String(ask.workspaceId),
      (group) => store.findSchemasByIds(group[0]!.workspaceId, [...new Set(group.flatMap((ask) => ask.ids))]),
      (ask, found: SchemaRecord[]) => {
        const ids = new Set(ask.ids);
        return found.filter((schema) => ids.has(schema.id));
      },
    ),
  );
  const dataSources = lookupBatch((asks: Array<{ tenant: Tenant; refs: DataSourceRefs }>) =>
    answeredTogether(
      asks,
      (ask) => `${ask.tenant.workspaceId}/${ask.tenant.environment}`,
      (group) =>
        store.findDataSources(group[0]!.tenant, {
          ids: [...new Set(group.flatMap((ask) => ask.refs.ids))],
          providedIds: [...new Set(group.flatMap((ask) => ask.refs.providedIds))],
        }),
      (ask, found: DataSourceRecord[]) => {
        const ids = new Set(ask.refs.ids);
        const providedIds = new Set(ask.refs.providedIds);
        return found.filter((source) => ids.has(source.id) || providedIds.has(source.providedId));
      },
    ),
  );
  return {
    findSchemasByIds: (workspaceId, ids) => schemas({ workspaceId, ids }),
    findDataSources: (tenant, refs) => dataSources({ tenant, refs }),
  };
}
