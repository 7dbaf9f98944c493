import { failure } from '../../domain/errors.js';
import { batchedCatalogueReads, batchedUserGroupReads } from '../hot-reads.js';
import type { Store } from '../../domain/store.port.js';
import type { BatchedUserGroupReads } from '../../domain/user-groups/user-groups.port.js';
import { apiTokenMethods } from './api-tokens.js';
import { auditEvents } from './audit-events.js';
import { ciphertextMethods } from './ciphertexts.js';
import { consoleSessionMethods } from './console-sessions.js';
import { oidcSessionMethods } from './oidc-sessions.js';
import { usageMethods } from './usage.js';
import { embedTokenRevocationMethods } from './embed-token-revocations.js';
import { dataSourceMethods } from './data-sources.js';
import { withPostgresErrorsMapped } from './mapped-errors.js';
import { idempotencyKeyMethods } from './idempotency-keys.js';
import { consumedEmbedTokenMethods } from './consumed-embed-tokens.js';
import { signingKeyMethods } from './signing-keys.js';
import { migratePostgres } from './migrate.js';
import { MIGRATIONS } from './migrations/index.js';
import { openPostgresDatabase } from './postgres-database.js';
import type { PostgresStoreOptions } from './postgres-database.js';
import { schemaMethods } from './schemas.js';
import { refreshStaleStatistics, refreshStatistics, serverWarnings } from './statistics.js';
import { statement } from './statements.js';
import { userGroupMethods } from './user-groups/index.js';
import { webhookMethods } from './webhooks.js';
import { workspaceMethods } from './workspaces.js';

export type { PostgresStoreOptions } from './postgres-database.js';

const PING = statement('SELECT 1');

/**
 * The store on PostgreSQL. Several instances (processes or machines) may share one database: every
 * race the interface promises to settle is settled by the database (conflict clauses, conditional
 * updates, row locks), never by a read-then-write in this process.
 */
export function openPostgresStore(options: PostgresStoreOptions): Store {
  const db = openPostgresDatabase(options);
  const audit = auditEvents(db);
  const methods = withPostgresErrorsMapped<Omit<Store, 'ping' | 'connectionStats' | BatchedUserGroupReads>>({
    ...workspaceMethods(db, audit),
    ...apiTokenMethods(db, audit),
    ...schemaMethods(db, audit),
    ...dataSourceMethods(db, audit),
    ...userGroupMethods(db, audit),
    ...ciphertextMethods(db, audit),
    ...idempotencyKeyMethods(db),
    ...consumedEmbedTokenMethods(db),
    ...signingKeyMethods(db, audit),
    ...webhookMethods(db, audit),
    ...consoleSessionMethods(db, audit),
    ...oidcSessionMethods(db, audit),
    ...usageMethods(db, options.statementTimeoutMs),
    ...embedTokenRevocationMethods(db, audit),
    listAuditEvents: (query) => audit.list(query),
    migrate: () => migratePostgres(db, MIGRATIONS),
    refreshStatistics: () => refreshStatistics(db),
    refreshStaleStatistics: () => refreshStaleStatistics(db),
    serverWarnings: () => serverWarnings(db),
    close: () => db.close(),
  });
  return {
    ...methods,
    ...batchedUserGroupReads(methods.lookUpUserGroups),
    ...batchedCatalogueReads(methods),
    connectionStats: () => db.stats(),
    ping: async () => {
      try {
        await db.rows(PING());
      } catch (error) {
        // Readiness cares only whether the database answers, whatever the reason it does not.
        throw failure.unavailable(error);
      }
    },
  };
}
