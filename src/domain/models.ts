import type { Environment, Scope, Tenant } from './tenancy.js';
import type { Actor } from './tenancy.js';
import type { WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import type { AccessRule } from '../wire/access-rules.schemas.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** ISO-8601 UTC timestamp with milliseconds, e.g. 2026-11-22T10:00:00.000Z. */
export type Timestamp = string;

export interface Workspace {
  id: number;
  name: string;
  createdAt: Timestamp;
}

/** An API token's own rate limit: a bucket of `burst` requests that refills `perSecond` a second. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface ApiTokenRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  name: string;
  scope: Scope;
  /** Null: the server's default limit applies. */
  rateLimit: RateLimit | null;
  createdAt: Timestamp;
  lastUsedAt: Timestamp | null;
  revokedAt: Timestamp | null;
}

/**
 * A signed-in admin console (SPEC §14): it acts as its API token. Only the SHA-256 of the session's
 * secret (the cookie's value) is stored. `expiresAt` is when it ends unless used again: the earlier of
 * its absolute and its idle expiry (src/domain/console-sessions.rules.ts).
 */
export interface ConsoleSessionRecord {
  id: number;
  apiTokenId: number;
  createdAt: Timestamp;
  lastSeenAt: Timestamp;
  expiresAt: Timestamp;
}

export interface NewConsoleSession {
  idHash: string;
  apiToken: Pick<ApiTokenRecord, 'id' | 'workspaceId' | 'environment'>;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export interface NewApiToken {
  workspaceId: number;
  environment: Environment;
  name: string;
  scope: Scope;
  /** Absent or null: the server's default limit applies. */
  rateLimit?: RateLimit | null;
  tokenHash: string;
  createdAt: Timestamp;
}

export interface SchemaRecord {
  id: number;
  workspaceId: number;
  name: string;
  createdAt: Timestamp;
}

export interface DataSourceRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  providedId: string;
  name: string;
  schemaId: number;
  createdAt: Timestamp;
}

export interface DataSourcePatch {
  providedId?: string;
  name?: string;
  schemaId?: number;
}

export interface NewDataSource {
  tenant: Tenant;
  /** The number chosen for it, else the workspace's next. */
  id?: number;
  providedId: string;
  name: string;
  schemaId: number;
  createdAt: Timestamp;
}

/** One resolved mapping entry: the group reads schema `schemaId` from data source `dataSourceId`. */
export interface MappingEntry {
  schemaId: number;
  dataSourceId: number;
}

/** What a group holds, whether stored or about to be. */
export interface UserGroupFields {
  providedId: string;
  name: string;
  tokenHash: string;
  tokenCiphertext: string;
  properties: JsonObject | null;
  /** Sorted by schemaId. */
  mapping: MappingEntry[];
  /** The provided id of the parent group in the same tenant, or null for a root. */
  parentProvidedId: string | null;
  isDemoGroup: boolean;
  /** Distinct, in code point order. */
  tags: string[];
  /** The group's own access rules (SPEC §17), in the order given; [] when none. */
  accessRules: AccessRule[];
  createdAt: Timestamp;
}

/** What one ancestor of a group passes down to it (SPEC §11). */
export interface AncestorValues {
  teamId: number;
  properties: JsonObject | null;
  /** Its own access rules, which its descendants' effective rules include (SPEC §17). */
  accessRules: AccessRule[];
  /** Sorted by schemaId. */
  mapping: MappingEntry[];
}

export interface UserGroupRecord extends UserGroupFields {
  teamId: number;
  workspaceId: number;
  environment: Environment;
  /** Bumped by every change; lets a conditional write detect that the row moved under it. */
  version: number;
  /** Bumped by every change of the group token: embed tokens minted under an earlier one are void. */
  tokenGeneration: number;
  /** The group's ancestors as the read found them, parent first (at most three). */
  ancestors: AncestorValues[];
  updatedAt: Timestamp;
}

export interface NewUserGroup extends UserGroupFields {
  tenant: Tenant;
  /**
   * The team_id an import asks to keep (SPEC §12): kept only when it is above every team_id the
   * deployment has issued, and then later ones are issued above it; otherwise the next is issued.
   */
  teamId?: number;
}

/** Fields a PUT (or an import) may replace; an absent key stays as it is. */
export interface UserGroupPatch {
  providedId?: string;
  name?: string;
  properties?: JsonObject | null;
  mapping?: MappingEntry[];
  /** A provided id links the group under that parent; null detaches it. */
  parentProvidedId?: string | null;
  isDemoGroup?: boolean;
  tags?: string[];
  /** [] clears them. */
  accessRules?: AccessRule[];
  /** Only an import that carries tokens sets these, always together. */
  tokenHash?: string;
  tokenCiphertext?: string;
}

/**
 * The kinds of secret stored encrypted under the TokenCipher (each one column of one table).
 * Key rotation re-encrypts every kind, and `ugs keys list` counts each.
 */
export const CIPHERTEXT_KINDS = [
  'user_group_token',
  'idempotent_response',
  'signing_key',
  'webhook_secret',
  'webhook_previous_secret',
] as const;
export type CiphertextKind = (typeof CIPHERTEXT_KINDS)[number];

/** One stored ciphertext: which kind, the id of its row, and the ciphertext itself. */
export interface StoredCiphertext {
  kind: CiphertextKind;
  id: number;
  ciphertext: string;
}

/** Replace `ciphertext` by `replacement`, only if the row still holds `ciphertext`. */
export interface CiphertextReplacement extends StoredCiphertext {
  replacement: string;
  /** A hosted group token's keyed hash under the key of `replacement`, written with it (src/domain/secrets.ts). */
  lookupHash?: string;
}

export interface CiphertextCount {
  kind: CiphertextKind;
  keyId: string;
  count: number;
}

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
}

/** One of a workspace's embed-token signing key pairs (ES256). */
export interface SigningKeyRecord {
  id: number;
  workspaceId: number;
  /** The environment whose issuer the key signs for (SPEC §10): each environment has its own keys. */
  environment: Environment;
  /** The JWK thumbprint (RFC 7638) of the public key: the `kid` of the tokens it signs. */
  kid: string;
  /** The public key as a JWK (kty, crv, x, y). */
  publicJwk: JsonObject;
  /** The private key's JWK, as a keyring ciphertext. */
  privateKeyCiphertext: string;
  createdAt: Timestamp;
  /** When a newer key took over; null for the current key. */
  retiredAt: Timestamp | null;
}

export type NewSigningKey = Omit<SigningKeyRecord, 'id' | 'retiredAt'>;

/** The changes a webhook can announce (SPEC §13); each is also the audit action of the change. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What an endpoint asks for: some event types, or `*` for every one. */
export type WebhookEventFilter = WebhookEventType | '*';

export interface WebhookEndpointRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  url: string;
  /** Distinct, in the order given; `['*']` for every type. */
  events: WebhookEventFilter[];
  description: string;
  enabled: boolean;
  /** The signing secret (`whsec_…`) as a keyring ciphertext. */
  secretCiphertext: string;
  /** After a rotation, the secret it replaced keeps signing until `previousSecretExpiresAt`. */
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Timestamp | null;
  /** Since when every attempt to this endpoint has failed; null after a success. */
  failingSince: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export type NewWebhookEndpoint = Pick<
  WebhookEndpointRecord,
  'workspaceId' | 'environment' | 'url' | 'events' | 'description' | 'secretCiphertext' | 'createdAt'
>;

export interface WebhookEndpointPatch {
  url?: string;
  events?: WebhookEventFilter[];
  description?: string;
  enabled?: boolean;
}

/**
 * What a webhook event says about the object it concerns, as recorded with the change: the record
 * without any secret (tokens, hashes, ciphertexts never enter it).
 */
export type WebhookSubject =
  | { kind: 'user_group'; userGroup: Omit<UserGroupRecord, 'tokenHash' | 'tokenCiphertext'> }
  | { kind: 'api_token'; apiToken: ApiTokenRecord }
  | { kind: 'signing_key'; signingKey: Omit<SigningKeyRecord, 'privateKeyCiphertext'>; retiredKid: string | null };

export interface WebhookEventRecord {
  /** `evt_…`: the same on every attempt, the receiver's key for duplicates. */
  id: string;
  type: WebhookEventType;
  workspaceId: number;
  /** Null only for a signing key's event recorded before each environment had its own keys. */
  environment: Environment | null;
  subject: WebhookSubject;
  changes: FieldChanges | null;
  createdAt: Timestamp;
}

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export interface WebhookDeliveryRecord {
  id: number;
  endpointId: number;
  eventId: string;
  eventType: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: Timestamp | null;
  lastAttemptAt: Timestamp | null;
  /** The HTTP status of the last attempt, null when it got no response. */
  lastResponseStatus: number | null;
  /** Why the last attempt failed (a timeout, a refused address…), null after a success. */
  lastError: string | null;
  createdAt: Timestamp;
  completedAt: Timestamp | null;
}

/** A delivery a worker holds the lease of, with what it needs to make the attempt. */
export interface ClaimedWebhookDelivery {
  deliveryId: number;
  /** Attempts made before this one. */
  attempts: number;
  createdAt: Timestamp;
  endpoint: WebhookEndpointRecord;
  event: WebhookEventRecord;
  workspaceName: string;
}
