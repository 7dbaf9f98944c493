import type { AuditContext } from '../audit/audit.records.js';
import type { SchemaRecord } from './schema.records.js';

export interface SchemaStore {
  /**
   * Throws `schema_name_taken` when the workspace has a schema of that name, `id_taken` when it has
   * one numbered `id`. Without an id, the schema gets the workspace's next number above every number
   * it has issued or had chosen (never reused).
   */
  insertSchema(workspaceId: number, name: string, audit: AuditContext, id?: number): Promise<SchemaRecord>;
  listSchemas(workspaceId: number): Promise<SchemaRecord[]>;
  findSchemasByIds(workspaceId: number, ids: number[]): Promise<SchemaRecord[]>;
}
