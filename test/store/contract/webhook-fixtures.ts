import type { Timestamp } from '../../../src/domain/common.records.js';
import type {
  ClaimedWebhookDelivery,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhookEventFilter,
} from '../../../src/domain/webhook-endpoints/webhook.records.js';
import type { Tenant } from '../../../src/domain/tenancy.js';
import type { Store } from '../../../src/domain/store.port.js';
import type {
  WebhookAttempt,
  WebhookClaim,
  WebhookDeliveryQuery,
} from '../../../src/domain/webhook-endpoints/webhooks.port.js';
import { auditContext, randomHex, T0 } from '../store-fixtures.js';

/** `at` moved by `minutes`: the contract's clock for due times, leases and failure windows. */
export function plusMinutes(at: Timestamp, minutes: number): Timestamp {
  return new Date(Date.parse(at) + minutes * 60_000).toISOString();
}

/** An enabled endpoint of `tenant` wanting `events`, created at T0. */
export function addEndpoint(
  store: Store,
  tenant: Tenant,
  events: WebhookEventFilter[],
  url = 'https://hooks.example.com/ugs',
): Promise<WebhookEndpointRecord> {
  return store.insertWebhookEndpoint(
    { ...tenant, url, events, description: 'contract', secretCiphertext: randomHex(), createdAt: T0 },
    auditContext(),
  );
}

/** Every delivery of the endpoint (or of its tenant, with `query`), newest first. */
export function deliveriesOf(
  store: Store,
  endpoint: WebhookEndpointRecord,
  query: Partial<WebhookDeliveryQuery> = {},
): Promise<WebhookDeliveryRecord[]> {
  return store.listWebhookDeliveries({
    workspaceId: endpoint.workspaceId,
    environment: endpoint.environment,
    endpointId: endpoint.id,
    limit: 1000,
    ...query,
  });
}

/** A claim by `owner` at `now`, its lease a minute long, of up to 100 deliveries. */
export function claimAt(
  store: Store,
  owner: string,
  now: Timestamp,
  overrides: Partial<WebhookClaim> = {},
): Promise<ClaimedWebhookDelivery[]> {
  return store.claimWebhookDeliveries({
    owner,
    now,
    leaseUntil: plusMinutes(now, 1),
    limit: 100,
    skipEndpointIds: [],
    ...overrides,
  });
}

/**
 * Records what an attempt came to, as the worker that holds the lease: a 200 when delivered, a 500
 * otherwise; the failure window a day long unless `overrides` says otherwise.
 */
export function recordAttempt(
  store: Store,
  deliveryId: number,
  owner: string,
  at: Timestamp,
  outcome: WebhookAttempt['outcome'],
  overrides: Partial<WebhookAttempt> = {},
): Promise<boolean> {
  return store.recordWebhookAttempt({
    deliveryId,
    owner,
    at,
    outcome,
    responseStatus: outcome === 'delivered' ? 200 : 500,
    error: outcome === 'delivered' ? null : 'HTTP 500',
    disableIfFailingSince: plusMinutes(at, -24 * 60),
    ...overrides,
  });
}

/** The ids of claimed deliveries, in the order claimed. */
export const deliveryIds = (claimed: ClaimedWebhookDelivery[]): number[] =>
  claimed.map((delivery) => delivery.deliveryId);
