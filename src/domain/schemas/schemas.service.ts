import { auditContextOf } from '../audit/audit-context.js';
import { assertCatalogueId } from '../catalog.rules.js';
import type { Clock } from '../clock.js';
import type { SchemaRecord } from './schema.records.js';
import { requireScope } from '../api-tokens/scopes.js';
import type { Caller } from '../tenancy.js';
import type { SchemaStore } from './schemas.port.js';

export type SchemaService = ReturnType<typeof createSchemaService>;

export function createSchemaService({ store, clock }: { store: SchemaStore; clock: Clock }) {
  return {
    /** `id` chooses the schema's number (a mapping copied from elsewhere names it); else the workspace's next. */
    async createSchema(caller: Caller, input: { name: string; id?: number }): Promise<SchemaRecord> {
      requireScope(caller, 'admin');
      assertCatalogueId(input.id);
      return store.insertSchema(caller.tenant.workspaceId, input.name, auditContextOf(clock, caller), input.id);
    },

    async listSchemas(caller: Caller): Promise<SchemaRecord[]> {
      requireScope(caller, 'admin');
      return store.listSchemas(caller.tenant.workspaceId);
    },
  };
}
