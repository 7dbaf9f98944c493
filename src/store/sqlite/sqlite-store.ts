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
import { createGroupCommit } from './group-commit.js';
import { retryWhileBusy } from './busy-retry.js';
import { idempotencyKeyMethods } from './idempotency-keys.js';
import { consumedEmbedTokenMethods } from './consumed-embed-tokens.js';
import { migrateSqlite } from './migrate.js';
import { MIGRATIONS } from './migrations/index.js';
import { preparedOnFirstUse } from './prepared.js';
import { schemaMethods } from './schemas.js';
import { signingKeyMethods } from './signing-keys.js';
import { busyTimeoutOf, openSqliteDatabase } from './sqlite-database.js';
import type { SqliteStoreOptions } from './sqlite-database.js';
import { userGroupMethods } from './user-groups.js';
import { webhookMethods } from './webhooks.js';
import { workspaceMethods } from './workspaces.js';

export type { SqliteStoreOptions } from './sqlite-database.js';

type AsyncMethods = Omit<Store, 'connectionStats' | BatchedUserGroupReads>;

/**
 * The writes of the request path, committed in groups. Each is one self-contained transaction
 * function, as group commit requires; a write not listed here commits on its own, which is as
 * correct, only slower under load.
 */
const GROUP_COMMITTED: ReadonlyArray<keyof AsyncMethods> = [
  'insertUserGroupIfAbsent',
  'updateUserGroup',
  'rotateUserGroupToken',
  'deleteUserGroup',
  'recordApiTokenUse',
];

export function openSqliteStore(options: SqliteStoreOptions): Store {
  const db = openSqliteDatabase(options);
  const busyTimeoutMs = busyTimeoutOf(options);
  const audit = auditEvents(db);
  const sql = preparedOnFirstUse(db, { ping: 'SELECT 1' });
  const apiTokens = apiTokenMethods(db, audit);
  const methods = retryWhileBusy<AsyncMethods>(
    {
      ...workspaceMethods(db, audit),
      ...apiTokens,
      ...schemaMethods(db, audit),
      ...dataSourceMethods(db, audit),
      ...userGroupMethods(db, audit, apiTokens.findApiTokenByHash),
      ...ciphertextMethods(db, audit),
      ...idempotencyKeyMethods(db),
      ...consumedEmbedTokenMethods(db),
      ...signingKeyMethods(db, audit),
      ...webhookMethods(db, audit),
      ...consoleSessionMethods(db, audit),
      ...oidcSessionMethods(db, audit),
      ...usageMethods(db),
      ...embedTokenRevocationMethods(db, audit),
      listAuditEvents: (query) => audit.list(query),
      migrate: () => migrateSqlite(db, MIGRATIONS),
      refreshStatistics: () => [],
      refreshStaleStatistics: () => [],
      serverWarnings: () => [],
      ping: () => {
        try {
          sql.ping.get();
        } catch (error) {
          // Readiness cares only whether the database answers, whatever the reason it does not.
          throw failure.unavailable(error);
        }
      },
      close: () => {
        if (db.open) db.close();
      },
    },
    { busyTimeoutMs, grouped: { commit: createGroupCommit(db, { busyTimeoutMs }), methods: GROUP_COMMITTED } },
  );
  return {
    ...methods,
    ...batchedUserGroupReads(methods.lookUpUserGroups),
    ...batchedCatalogueReads(methods),
    connectionStats: () => null,
  };
}
