import type { WEBHOOK_EVENT_TYPES } from '../../wire/contract.constants.js';
import type { ApiTokenRecord } from '../api-tokens/api-token.records.js';
import type { FieldChanges } from '../audit/audit.records.js';
import type { Timestamp } from '../common.records.js';
import type { SigningKeyRecord } from '../signing-keys/signing-key.records.js';
import type { Environment } from '../tenancy.js';
import type { UserGroupRecord } from '../user-groups/user-group.records.js';

/** The changes a webhook can announce (docs/api.md#webhooks); each is also the audit action of the change. */
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
  /** The sync (docs/api.md#sync-tenants-as-code) the change was part of; absent otherwise. */
  syncId?: string;
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
