import { auditContextOf } from './audit-context.js';
import type { Clock } from './clock.js';
import type { SchemaRecord } from './models.js';
import { requireScope } from './scopes.js';
import type { Caller } from './tenancy.js';
import type { SchemaStore } from '../store/store.js';

export type SchemaService = ReturnType<typeof createSchemaService>;

export function createSchemaService({ store, clock }: { store: SchemaStore; clock: Clock }) {
  return {
    async createSchema(caller: Caller, input: { name: string }): Promise<SchemaRecord> {
      requireScope(caller, 'admin');
      return store.insertSchema(caller.tenant.workspaceId, input.name, auditContextOf(clock, caller));
    },

    async listSchemas(caller: Caller): Promise<SchemaRecord[]> {
      requireScope(caller, 'admin');
      return store.listSchemas(caller.tenant.workspaceId);
    },
  };
}
