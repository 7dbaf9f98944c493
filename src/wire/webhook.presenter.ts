import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../domain/webhook-endpoints/webhook.records.js';

/** A webhook endpoint as the API shows it: never its secret, which only creation and rotation return. */
export const toWebhookEndpoint = (record: WebhookEndpointRecord) => ({
  id: record.id,
  url: record.url,
  events: record.events,
  environment: record.environment,
  description: record.description,
  enabled: record.enabled,
  created_at: record.createdAt,
});

/** A delivery of an event to an endpoint, with the outcome of its latest attempt. */
export const toWebhookDelivery = (record: WebhookDeliveryRecord) => ({
  id: record.id,
  endpoint_id: record.endpointId,
  event_id: record.eventId,
  event_type: record.eventType,
  status: record.status,
  attempts: record.attempts,
  next_attempt_at: record.nextAttemptAt,
  last_attempt_at: record.lastAttemptAt,
  last_response_status: record.lastResponseStatus,
  last_error: record.lastError,
  created_at: record.createdAt,
  completed_at: record.completedAt,
});
