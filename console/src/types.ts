/*
 * The wire types, from the service's own schemas through the client library's type module (type-only:
 * nothing of the server reaches the bundle).
 */
export type {
  ApiToken,
  AuditEvent,
  DataSource,
  IssuedApiToken,
  IssuedWebhookEndpoint,
  MintedEmbedToken,
  Schema,
  SigningKey,
  UserGroup,
  WebhookDelivery,
  WebhookEndpoint,
} from '../../packages/client/src/types.js';
