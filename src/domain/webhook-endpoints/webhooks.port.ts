import type { AuditContext } from '../audit/audit.records.js';
import type { Timestamp } from '../common.records.js';
import type { Environment, Tenant } from '../tenancy.js';
import type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointPatch,
  WebhookEndpointRecord,
} from './webhook.records.js';

export interface WebhookDeliveryQuery {
  workspaceId: number;
  environment: Environment;
  endpointId?: number;
  status?: WebhookDeliveryStatus;
  /** Cursor: only deliveries with a smaller id (the list is newest first). */
  beforeId?: number;
  limit: number;
}

export interface WebhookClaim {
  /** Who takes the leases: one id per worker process, new at every start. */
  owner: string;
  now: Timestamp;
  leaseUntil: Timestamp;
  limit: number;
  /** Endpoints this worker is already busy enough with: none of theirs is taken. */
  skipEndpointIds: number[];
}

/** What one attempt came to; written only while `owner` still holds the delivery's lease. */
export interface WebhookAttempt {
  deliveryId: number;
  owner: string;
  at: Timestamp;
  outcome: 'delivered' | 'retry' | 'failed';
  /** When the next attempt is due (outcome `retry`). */
  nextAttemptAt?: Timestamp;
  responseStatus: number | null;
  error: string | null;
  /** A failure disables the endpoint when it has failed without a success since this moment or earlier. */
  disableIfFailingSince: Timestamp;
}

export interface WebhookBacklog {
  /** Deliveries not yet delivered or failed, of enabled endpoints. */
  pending: number;
  oldestPendingCreatedAt: Timestamp | null;
}

/** Webhook endpoints and the outbox of their deliveries (docs/api.md#webhooks). Events are written by the changes themselves. */
export interface WebhookStore {
  insertWebhookEndpoint(endpoint: NewWebhookEndpoint, audit: AuditContext): Promise<WebhookEndpointRecord>;
  listWebhookEndpoints(tenant: Tenant): Promise<WebhookEndpointRecord[]>;
  /** Null when the tenant has no endpoint with that id (another environment's included). */
  findWebhookEndpoint(tenant: Tenant, id: number): Promise<WebhookEndpointRecord | null>;
  /** Applies the patch, audited with before and after read inside the transaction; null when absent. Enabling clears the failure streak. */
  updateWebhookEndpoint(
    tenant: Tenant,
    id: number,
    patch: WebhookEndpointPatch,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | null>;
  /** The new secret signs from now on; the current one becomes the previous until `previousExpiresAt`. */
  rotateWebhookSecret(
    tenant: Tenant,
    id: number,
    secretCiphertext: string,
    previousExpiresAt: Timestamp,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | null>;
  /** Deletes the endpoint with its deliveries; null when absent. */
  deleteWebhookEndpoint(tenant: Tenant, id: number, audit: AuditContext): Promise<WebhookEndpointRecord | null>;
  /** Newest first. */
  listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]>;
  /** Puts a delivery back in the queue, due at `audit.at`, with a fresh attempt budget; null when absent. */
  retryWebhookDelivery(tenant: Tenant, id: number, audit: AuditContext): Promise<WebhookDeliveryRecord | null>;
  /**
   * Takes the lease of up to `limit` due deliveries of enabled endpoints, oldest first, each the
   * earliest unfinished one of its endpoint and ordering key (a group, a token): so one group's
   * events reach one endpoint in order, and no two workers hold the same delivery.
   */
  claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]>;
  /** Records the attempt; false when the lease was lost (expired and taken, or the endpoint deleted). */
  recordWebhookAttempt(attempt: WebhookAttempt): Promise<boolean>;
  /** Deletes at most `limit` finished deliveries completed before the time, and events left without delivery; returns how many deliveries went. */
  purgeWebhookHistory(completedBefore: Timestamp, limit: number): Promise<number>;
  webhookBacklog(): Promise<WebhookBacklog>;
}
