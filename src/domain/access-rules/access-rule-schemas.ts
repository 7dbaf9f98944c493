import type { SchemaStore } from '../schemas/schemas.port.js';
import type { Tenant } from '../tenancy.js';
import { assertSchemasExist, schemaIdsOf, type AccessRule } from './access-rules.rules.js';

/** The schemas of a workspace that these rules name and that exist: one catalogue read for any number of rules. */
export async function knownRuleSchemas(
  store: Pick<SchemaStore, 'findSchemasByIds'>,
  tenant: Tenant,
  rules: AccessRule[],
): Promise<Set<number>> {
  const ids = [...new Set(rules.map((rule) => rule.schema_id))];
  if (ids.length === 0) return new Set();
  return new Set((await store.findSchemasByIds(tenant.workspaceId, ids)).map((schema) => schema.id));
}

/** Refuses rules that name a schema the workspace does not have (`unknown_schema`, naming the rule's field). */
export async function assertRuleSchemasExist(
  store: Pick<SchemaStore, 'findSchemasByIds'>,
  tenant: Tenant,
  rules: AccessRule[] | undefined,
): Promise<void> {
  if (!rules || schemaIdsOf(rules).size === 0) return;
  assertSchemasExist(rules, await knownRuleSchemas(store, tenant, rules));
}
