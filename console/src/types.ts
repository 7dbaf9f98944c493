/* The wire types, as @ugs/client has them (derived from the service's own schemas). */
export type {
  ApiToken,
  AuditEvent,
  DataSource,
  IssuedApiToken,
  IssuedWebhookEndpoint,
  MintedEmbedToken,
  MintEmbedTokenBody,
  PersonSession,
  Schema,
  SigningKey,
  SyncPlanItem,
  UpdateUserGroupBody,
  UserGroup,
  UserGroupSync,
  WebhookDelivery,
  WebhookEndpoint,
} from '@ugs/client';
