import { changedFields, creationChanges, deletionChanges } from '../audit/audit-entry.js';
import { failure } from '../errors.js';
import type { AuditEntry } from '../audit/audit-entry.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook.records.js';
import type { Tenant } from '../tenancy.js';

/*
 * What a change of a webhook endpoint (or a hand retry of a delivery) writes into the audit trail,
 * from the rows the engine read and wrote inside the change's transaction.
 */

/** The fields of an endpoint its audit events show: never the secret. */
function auditFields(endpoint: WebhookEndpointRecord): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
  };
}

/** The most webhook endpoints one environment of a workspace may have (docs/api.md#webhooks). */
export const MAX_WEBHOOK_ENDPOINTS = 100;

/** Refuses a new endpoint when the environment already has the most it may; `existing` counted under the engine's lock. */
export function assertEndpointRoom(existing: number): void {
  if (existing >= MAX_WEBHOOK_ENDPOINTS) throw failure.webhookEndpointLimit(MAX_WEBHOOK_ENDPOINTS);
}

/**
 * A delivered delivery is not sent again: its payload is the state at its event, and sending it after
 * newer events would hand the receiver an older state as the latest. Pending and failed ones may be.
 */
export function assertRetryable(delivery: WebhookDeliveryRecord): void {
  if (delivery.status === 'delivered') throw failure.webhookDeliveryDelivered(delivery.id);
}

export function endpointCreated(endpoint: WebhookEndpointRecord): AuditEntry {
  return {
    action: 'webhook_endpoint.created',
    workspaceId: endpoint.workspaceId,
    environment: endpoint.environment,
    changes: creationChanges(auditFields(endpoint)),
  };
}

/** Nothing for an endpoint that was not there. */
export function endpointDeleted(endpoint: WebhookEndpointRecord | null): AuditEntry[] {
  if (!endpoint) return [];
  return [
    {
      action: 'webhook_endpoint.deleted',
      workspaceId: endpoint.workspaceId,
      environment: endpoint.environment,
      changes: deletionChanges(auditFields(endpoint)),
    },
  ];
}

/** The fields that differ, before and after; none (and no entry) when the patch changed nothing. */
export function endpointUpdated(
  before: WebhookEndpointRecord,
  after: WebhookEndpointRecord,
  action: 'webhook_endpoint.updated' | 'webhook_endpoint.disabled' = 'webhook_endpoint.updated',
): AuditEntry[] {
  const changes = changedFields(auditFields(before), auditFields(after));
  if (Object.keys(changes).length === 0) return [];
  return [{ action, workspaceId: after.workspaceId, environment: after.environment, changes }];
}

/** Nothing for an endpoint that was not there. */
export function secretRotated(endpoint: WebhookEndpointRecord | null): AuditEntry[] {
  if (!endpoint) return [];
  return [
    {
      action: 'webhook_endpoint.secret_rotated',
      workspaceId: endpoint.workspaceId,
      environment: endpoint.environment,
      changes: { previous_secret_expires_at: { before: null, after: endpoint.previousSecretExpiresAt } },
    },
  ];
}

export function deliveryRetried(delivery: WebhookDeliveryRecord, { workspaceId, environment }: Tenant): AuditEntry {
  return {
    action: 'webhook_delivery.retried',
    workspaceId,
    environment,
    changes: {
      status: { before: delivery.status, after: 'pending' },
      delivery_id: { before: null, after: delivery.id },
    },
  };
}

/**
 * What follows a recorded attempt: a finished delivery (delivered or failed for good) lets the next
 * one of its endpoint and ordering key go; the endpoint's health records whether it answered.
 */
export function attemptFollowUp(outcome: 'delivered' | 'retry' | 'failed'): {
  promoteNext: boolean;
  endpointAnswered: boolean;
} {
  return { promoteNext: outcome !== 'retry', endpointAnswered: outcome === 'delivered' };
}

/** An endpoint that the failure window disabled (null: still within it, or already disabled). */
export function endpointDisabled(disabled: WebhookEndpointRecord | null): AuditEntry[] {
  return disabled ? endpointUpdated({ ...disabled, enabled: true }, disabled, 'webhook_endpoint.disabled') : [];
}
