import type { Timestamp } from '../common.records.js';
import type { Actor, Environment } from '../tenancy.js';

export type AuditAction =
  | 'workspace.created'
  | 'api_token.created'
  | 'api_token.updated'
  | 'api_token.revoked'
  | 'schema.created'
  | 'data_source.created'
  | 'data_source.updated'
  | 'data_source.deleted'
  | 'user_group.created'
  | 'user_group.updated'
  | 'user_group.token_rotated'
  | 'user_group.deleted'
  | 'encryption_key.rotated'
  | 'signing_key.created'
  | 'signing_key.rotated'
  | 'webhook_endpoint.created'
  | 'webhook_endpoint.updated'
  | 'webhook_endpoint.deleted'
  | 'webhook_endpoint.secret_rotated'
  | 'webhook_endpoint.disabled'
  | 'webhook_delivery.retried'
  | 'console_session.created'
  | 'console_session.ended';

export type FieldChanges = Record<string, { before: unknown; after: unknown }>;

/** What every change carries into its audit event; the store adds the entity it touched. */
export interface AuditContext {
  at: Timestamp;
  actor: Actor;
  requestId: string | null;
  /** Changed fields with before and after values; never a secret. */
  changes?: FieldChanges;
  /** The sync (docs/api.md#sync-tenants-as-code) the change is part of: its audit and webhook events carry it. */
  syncId?: string;
}

export interface AuditEventRecord {
  id: number;
  at: Timestamp;
  workspaceId: number;
  environment: Environment | null;
  actor: Actor;
  action: AuditAction;
  teamId: number | null;
  providedId: string | null;
  changes: FieldChanges | null;
  requestId: string | null;
  /** The sync (docs/api.md#sync-tenants-as-code) the change was part of, or null. */
  syncId: string | null;
}
