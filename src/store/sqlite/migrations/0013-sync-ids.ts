import type { Migration } from '../../migration.js';

/*
 * A sync (docs/api.md#sync-tenants-as-code) marks every audit event it writes with its id, so that an operator finds all the
 * changes of one apply together. Events of other changes leave it NULL.
 */
export const syncIds: Migration = {
  version: 13,
  name: 'sync ids',
  kind: 'contract',
  sql: `
ALTER TABLE audit_events ADD COLUMN sync_id TEXT;
`,
};
