import { Type } from 'typebox';
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_EVENT_TYPES } from './contract.constants.js';
import { EnvironmentTag, NO_CONTROL_CHARACTERS, Timestamp } from './common.schemas.js';
import { PageQuery } from './page.schemas.js';
import { Count, IdParam, IssuedId } from './common.schemas.js';
import { Success } from './envelope.js';

const EventFilter = Type.Union([
  Type.Literal('user_group.created'),
  Type.Literal('user_group.updated'),
  Type.Literal('user_group.token_rotated'),
  Type.Literal('user_group.deleted'),
  Type.Literal('api_token.created'),
  Type.Literal('api_token.revoked'),
  Type.Literal('signing_key.rotated'),
  Type.Literal('*'),
]);
const Status = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);
const Events = Type.Array(EventFilter, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  description: `The event types to receive: any of ${WEBHOOK_EVENT_TYPES.join(', ')}; or ["*"] for all of them.`,
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'Where events are POSTed: http(s), no credentials, no fragment; its host must not resolve to a private address.',
});
const Description = Type.String({
  maxLength: 256,
  pattern: NO_CONTROL_CHARACTERS,
  description: 'A label for listings.',
});

const WebhookEndpointFields = {
  id: IssuedId,
  url: Type.String(),
  events: Type.Array(EventFilter),
  environment: EnvironmentTag,
  description: Type.String(),
  enabled: Type.Boolean({
    description: 'false once disabled (by PATCH, or after 24 h of failed deliveries): no event is sent to it.',
  }),
  created_at: Timestamp,
};
// Listings have no `secret` field at all, so the serialiser cannot emit one there.
export const WebhookEndpoint = Type.Object(WebhookEndpointFields);
export const IssuedWebhookEndpoint = Type.Object({
  ...WebhookEndpointFields,
  secret: Type.String({ description: 'The signing secret, whsec_…: shown in this response only.' }),
});
export const WebhookEndpointResponse = Type.Object({ success: Success, webhook_endpoint: WebhookEndpoint });
export const IssuedWebhookEndpointResponse = Type.Object({ success: Success, webhook_endpoint: IssuedWebhookEndpoint });
export const WebhookEndpointParams = Type.Object({ id: IdParam('Webhook endpoint id.') });

export const CreateWebhookEndpointBody = Type.Object(
  { url: Url, events: Events, environment: Type.Optional(EnvironmentTag), description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const WebhookDelivery = Type.Object({
  id: IssuedId,
  endpoint_id: IssuedId,
  event_id: Type.String({ description: 'evt_…, the webhook-id header of every attempt.' }),
  event_type: Type.String(),
  status: Status,
  attempts: Count,
  next_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description:
      'When the next attempt is due, while pending; null while it waits behind an earlier event of its group (or token) to the same endpoint, and once finished.',
  }),
  last_attempt_at: Type.Union([Timestamp, Type.Null()]),
  last_response_status: Type.Union([Type.Integer({ minimum: 0, maximum: 999 }), Type.Null()], {
    description: 'HTTP status (three digits) of the last attempt; null when it got none.',
  }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  completed_at: Type.Union([Timestamp, Type.Null()]),
});
export const WebhookDeliveryResponse = Type.Object({ success: Success, webhook_delivery: WebhookDelivery });
export const WebhookDeliveryParams = Type.Object({ id: IdParam('Webhook delivery id.') });

export const WebhookDeliveryQuery = Type.Object(
  {
    environment: Type.Optional(EnvironmentTag),
    endpoint_id: Type.Optional(IdParam('Only deliveries to this endpoint.')),
    status: Type.Optional(Status),
    ...PageQuery,
  },
  { additionalProperties: false },
);

/**
 * The body of every webhook request (docs/api.md#webhooks). `data` holds the object as the API shows it (never a
 * token) under its singular name, and for updates the changed fields, before and after.
 */
export const WebhookEventPayload = Type.Object({
  id: Type.String({ description: 'evt_…, also the webhook-id header: the key for telling a repeated delivery apart.' }),
  type: EventFilter,
  created_at: Timestamp,
  workspace: Type.String(),
  environment: Type.Union([EnvironmentTag, Type.Null()], {
    description:
      "The environment of the change; a signing key's is the environment whose issuer it signs for. null only on signing_key.rotated events recorded before signing keys were per environment.",
  }),
  sync_id: Type.Optional(
    Type.String({
      description: 'The sync (POST /api/admin/user_groups/sync) the change was part of; absent otherwise.',
    }),
  ),
  data: Type.Object(
    {
      user_group: Type.Optional(
        Type.Object(
          {},
          { additionalProperties: true, description: 'A user group as the API shows it, without its token.' },
        ),
      ),
      api_token: Type.Optional(
        Type.Object(
          {},
          { additionalProperties: true, description: 'An API token as the API lists it, without its secret.' },
        ),
      ),
      signing_key: Type.Optional(Type.Object({}, { additionalProperties: true })),
      changes: Type.Optional(
        Type.Record(Type.String(), Type.Object({ before: Type.Unknown(), after: Type.Unknown() })),
      ),
    },
    { additionalProperties: false },
  ),
});
