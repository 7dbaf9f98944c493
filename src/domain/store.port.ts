import type { UserGroupSyncStore } from './user-group-sync/user-group-sync.port.js';
import type { ApiTokenStore } from './api-tokens/api-tokens.port.js';
import type { AuditStore } from './audit/audit.port.js';
import type { ConsoleSessionStore } from './console-sessions/console-sessions.port.js';
import type { OidcSessionStore } from './console-sessions/oidc-sessions.port.js';
import type { EmbedTokenConsumptionStore } from './embed-tokens/embed-token-consumption.port.js';
import type { DataSourceStore } from './data-sources/data-sources.port.js';
import type { CiphertextStore } from './encryption-keys/ciphertexts.port.js';
import type { IdempotencyStore } from './idempotency/idempotency.port.js';
import type { SchemaStore } from './schemas/schemas.port.js';
import type { SigningKeyStore } from './signing-keys/signing-keys.port.js';
import type { UsageStore } from './usage/usage.port.js';
import type { EmbedTokenRevocationStore } from './embed-tokens/embed-token-revocations.port.js';
import type { UserGroupStore } from './user-groups/user-groups.port.js';
import type { WebhookStore } from './webhook-endpoints/webhooks.port.js';
import type { WorkspaceStore } from './workspaces/workspaces.port.js';

/*
 * The storage the domain needs: every resource's port (src/domain/<resource>/<resource>.port.ts) in
 * one interface, which each engine implements (src/store/sqlite, src/store/postgres). Every method is
 * atomic: a change and its audit event commit together or not at all. Implementations map driver
 * failures to domain errors in one place: unique violations to the matching `*_taken` AppError,
 * "busy"/"connection lost" to `unavailable`. Methods are async so that network-backed engines fit
 * behind the same interface.
 */

export interface ConnectionStats {
  total: number;
  idle: number;
  /** Callers queued for a connection. */
  waiting: number;
}

export interface Store
  extends
    WorkspaceStore,
    ApiTokenStore,
    SchemaStore,
    DataSourceStore,
    UserGroupStore,
    UserGroupSyncStore,
    AuditStore,
    CiphertextStore,
    IdempotencyStore,
    SigningKeyStore,
    WebhookStore,
    ConsoleSessionStore,
    OidcSessionStore,
    UsageStore,
    EmbedTokenRevocationStore,
    EmbedTokenConsumptionStore {
  /** Applies pending migrations; safe to call from several processes at once. Resolves with how many it applied. */
  migrate(): Promise<number>;
  /**
   * Brings the planner's statistics of the service's tables up to date after a bulk change (ANALYZE on
   * PostgreSQL; nothing on SQLite, whose planner needs none for the service's statements). Never
   * fails: what it could not do (a role that may not analyse) comes back as warnings.
   */
  refreshStatistics(): Promise<string[]>;
  /**
   * At start: the same for the tables whose statistics are stale (a bulk load since their last
   * ANALYZE, autovacuum off or behind); nothing on SQLite. Comes back as warnings naming what it
   * analysed and what an operator should do, and what it could not do.
   */
  refreshStaleStatistics(): Promise<string[]>;
  /** What about the database server's settings an operator should hear at start (e.g. autovacuum off). */
  serverWarnings(): Promise<string[]>;
  /** Resolves when the database answers a trivial query; throws `unavailable` otherwise. */
  ping(): Promise<void>;
  /** Connection pool figures for /metrics; null for an engine without a pool. */
  connectionStats(): ConnectionStats | null;
  close(): Promise<void>;
}
