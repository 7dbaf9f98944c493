/*
 * The wire types, derived from the server's own TypeBox schemas (one source): a field the server
 * adds or changes shows here at the next build. Type-only imports, erased from the JavaScript.
 */
import type { Static } from 'typebox';
import type {
  DeleteUserGroupBody,
  GetOrCreateUserGroupBody,
  UpdateUserGroupBody,
  UserGroup,
} from '../../../src/wire/user-groups.schemas.js';
import type {
  EmbedTokenResponse,
  MintEmbedTokenBody,
  VerifiedTokenResponse,
} from '../../../src/wire/embed-tokens.schemas.js';
import type { RevokedEmbedTokensResponse } from '../../../src/wire/embed-token-revocations.schemas.js';
import type { IntrospectionResponse } from '../../../src/wire/embed-token-lifecycle.schemas.js';
import type { CreateDataSourceBody, DataSource, UpdateDataSourceBody } from '../../../src/wire/data-sources.schemas.js';
import type { CreateSchemaBody, Schema } from '../../../src/wire/schemas.schemas.js';
import type {
  ApiToken,
  CreateApiTokenBody,
  IssuedApiToken,
  UpdateApiTokenBody,
} from '../../../src/wire/api-tokens.schemas.js';
import type { AuditEvent, AuditQuery } from '../../../src/wire/audit-events.schemas.js';
import type { AccessRule, ResolvedAccessRule } from '../../../src/wire/access-rules.schemas.js';
import type { ConsoleSession } from '../../../src/wire/console-sessions.schemas.js';
import type { PersonSession, PersonSessionsQuery } from '../../../src/wire/person-sessions.schemas.js';
import type { ListUserGroupsQuery } from '../../../src/wire/admin-user-groups.schemas.js';
import type { SigningKey, SigningKeyRotationResponse } from '../../../src/wire/signing-keys.schemas.js';
import type {
  TopUsageQuery,
  TopUsageResponse,
  UsageSeriesQuery,
  UsageSeriesResponse,
} from '../../../src/wire/usage.schemas.js';
import type {
  SyncPlanItem as SyncPlanItemSchema,
  SyncQuery,
  SyncResponse,
  SyncUserGroupLine,
} from '../../../src/wire/user-group-sync.schemas.js';
import type { ImportResponse } from '../../../src/wire/user-group-import.schemas.js';
import type { TransferredUserGroupLine } from '../../../src/wire/user-groups.schemas.js';
import type {
  CreateWebhookEndpointBody,
  IssuedWebhookEndpoint,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhookEndpoint,
  WebhookEventPayload,
} from '../../../src/wire/webhooks.schemas.js';

export type {
  DeleteUserGroupBody,
  GetOrCreateUserGroupBody,
  UpdateUserGroupBody,
  UserGroup,
  MintEmbedTokenBody,
  CreateDataSourceBody,
  DataSource,
  UpdateDataSourceBody,
  CreateSchemaBody,
  Schema,
  AccessRule,
  ResolvedAccessRule,
};
export type ApiToken = Static<typeof ApiToken>;
export type IssuedApiToken = Static<typeof IssuedApiToken>;
export type CreateApiTokenBody = Static<typeof CreateApiTokenBody>;
export type UpdateApiTokenBody = Static<typeof UpdateApiTokenBody>;
export type AuditEvent = Static<typeof AuditEvent>;
export type AuditQuery = Static<typeof AuditQuery>;
export type ConsoleSession = Static<typeof ConsoleSession>;
/** A person's console session (signed in through the identity provider), as an admin lists it. */
export type PersonSession = Static<typeof PersonSession>;
export type PersonSessionsQuery = Static<typeof PersonSessionsQuery>;
export type ListUserGroupsQuery = Static<typeof ListUserGroupsQuery>;
export type SigningKey = Static<typeof SigningKey>;
export type UsageSeriesQuery = Static<typeof UsageSeriesQuery>;
export type UsageSeries = Omit<Static<typeof UsageSeriesResponse>, 'success'>;
export type TopUsageQuery = Static<typeof TopUsageQuery>;
export type TopUsage = Omit<Static<typeof TopUsageResponse>, 'success'>;
export type SigningKeyRotation = Omit<Static<typeof SigningKeyRotationResponse>, 'success'>;
export type MintedEmbedToken = Omit<Static<typeof EmbedTokenResponse>, 'success'>;
export type RevokedEmbedTokens = Omit<Static<typeof RevokedEmbedTokensResponse>, 'success'>;
/** RFC 7662: `{active:false}`, or `active: true` with the token's claims. */
export type EmbedTokenIntrospection = Static<typeof IntrospectionResponse>;
export type VerifiedToken = Omit<Static<typeof VerifiedTokenResponse>, 'success'>;
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;
export type IssuedWebhookEndpoint = Static<typeof IssuedWebhookEndpoint>;
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export type WebhookDeliveryQuery = Static<typeof WebhookDeliveryQuery>;
export type WebhookEvent = Static<typeof WebhookEventPayload>;
export type { SyncUserGroupLine };
export type SyncOptions = Omit<Static<typeof SyncQuery>, 'dry_run'>;
/** One field of a sync plan's entry: its value before and after (null: unset). */
export interface SyncFieldChange {
  before: unknown;
  after: unknown;
}
/** One group of a sync's plan; `changes` maps each field (wire name) to its before and after. */
export type SyncPlanItem = Omit<Static<typeof SyncPlanItemSchema>, 'changes'> & {
  changes?: Record<string, SyncFieldChange>;
};
/** A sync's answer (docs/api.md#usage-per-group): its id, whether it was a dry run and was applied, the counts and the plan. */
export type UserGroupSync = Omit<Static<typeof SyncResponse>['sync'], 'plan'> & { plan: SyncPlanItem[] };
/** One line of an import: a group as `ugs groups export` writes it (or the hosted product's, token included). */
export type ImportUserGroupLine = Static<typeof TransferredUserGroupLine>;
export type ImportOptions = { dryRun?: boolean; replaceTokens?: boolean };
/** An import's summary: the CLI's counts, each refused line with its `line` (NDJSON) or `index` (array) and reason. */
export type UserGroupImport = Static<typeof ImportResponse>['import'];

/** A page of a cursor-paginated list; `next_cursor` is null on the last page. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
