import type { Migration } from '../../migration.js';

/**
 * The trigger's message, which the store recognises in the error (sqlite-errors.ts); a constant, so
 * the two cannot drift apart.
 */
export const MAPPING_SCHEMA_MISMATCH = 'user_group_mappings: the data source serves another schema';

/*
 * A mapping entry names a schema and a data source, and the data source must serve that schema
 * (docs/api.md#wire-conventions). The domain checks it before writing; this trigger checks it again inside the write's
 * own transaction, under SQLite's one write lock, so a change of the data source's schema committed
 * in between is caught (a schema change checks for mappings under the same lock). A trigger rather
 * than PostgreSQL's composite foreign key: adding one to an existing SQLite table means rebuilding
 * it, and rows written before this migration are left as they are on both engines.
 */
export const mappingSchemaAgreement: Migration = {
  version: 4,
  name: 'mapping schema agreement',
  kind: 'contract',
  sql: `
CREATE TRIGGER user_group_mappings_schema_agreement BEFORE INSERT ON user_group_mappings
WHEN EXISTS (SELECT 1 FROM data_sources WHERE id = NEW.data_source_id AND schema_id <> NEW.schema_id)
BEGIN
  SELECT RAISE(ABORT, '${MAPPING_SCHEMA_MISMATCH}');
END;
`,
};
