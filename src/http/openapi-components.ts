import { isDeepStrictEqual } from 'node:util';
import * as accessRules from '../wire/access-rules.schemas.js';
import * as apiTokens from '../wire/api-tokens.schemas.js';
import { AuditEvent } from '../wire/audit-events.schemas.js';
import { EnvironmentTag } from '../wire/common.schemas.js';
import * as dataSources from '../wire/data-sources.schemas.js';
import * as embedTokens from '../wire/embed-tokens.schemas.js';
import { ErrorEnvelope } from '../wire/envelope.js';
import * as schemas from '../wire/schemas.schemas.js';
import * as signingKeys from '../wire/signing-keys.schemas.js';
import * as userGroups from '../wire/user-groups.schemas.js';
import * as webhooks from '../wire/webhooks.schemas.js';
import * as userGroupSync from '../wire/user-group-sync.schemas.js';
import * as userGroupImport from '../wire/user-group-import.schemas.js';

/** Of a wire module, the schemas named here, each under its own name. */
const named = <M extends object, K extends keyof M & string>(module: M, names: K[]): Array<[string, unknown]> =>
  names.map((name) => [name, module[name]]);

/**
 * The wire schemas /openapi.json names, by the name each gets in components.schemas: the resources,
 * the error envelope, the request bodies and the responses. A generator makes one type of each
 * (`UserGroup`, `Error`, …) where it would otherwise make one per place it appears. They are
 * recognised where the routes use them, so the wire modules stay as they validate.
 */
const ENTRIES: Array<[string, unknown]> = [
  ['Error', ErrorEnvelope],
  ['Environment', EnvironmentTag],
  ['AuditEvent', AuditEvent],
  ['VerifiedEmbed', embedTokens.EmbedOfToken],
  ['WebhookEvent', webhooks.WebhookEventPayload],
  ...named(userGroups, [
    'UserGroup',
    'UserGroupResponse',
    'GetOrCreateUserGroupBody',
    'GetOrCreateUserGroupResponse',
    'UpdateUserGroupBody',
    'RotateUserGroupTokenBody',
    'DeleteUserGroupBody',
    'DeleteUserGroupResponse',
    'VerifyUserGroupTokenBody',
  ]),
  ...named(userGroupSync, ['SyncUserGroupLine', 'SyncPlanItem', 'SyncResponse']),
  ...named(userGroupImport, ['ImportResponse']),
  ...named(accessRules, ['AccessRule', 'ComputedAccessRule', 'ResolvedAccessRule']),
  ...named(embedTokens, ['VerifiedTokenResponse', 'MintEmbedTokenBody', 'EmbedTokenResponse']),
  ...named(schemas, ['Schema', 'CreateSchemaBody']),
  ...named(dataSources, ['DataSource', 'DataSourceResponse', 'CreateDataSourceBody', 'UpdateDataSourceBody']),
  ...named(apiTokens, [
    'ApiToken',
    'IssuedApiToken',
    'ApiTokenResponse',
    'RateLimit',
    'CreateApiTokenBody',
    'UpdateApiTokenBody',
  ]),
  ...named(signingKeys, [
    'SigningKey',
    'SigningKeysResponse',
    'SigningKeyRotationResponse',
    'PublicJwk',
    'JwkSet',
    'OpenIdConfiguration',
  ]),
  ...named(webhooks, [
    'WebhookEndpoint',
    'IssuedWebhookEndpoint',
    'WebhookEndpointResponse',
    'IssuedWebhookEndpointResponse',
    'CreateWebhookEndpointBody',
    'UpdateWebhookEndpointBody',
    'WebhookDelivery',
    'WebhookDeliveryResponse',
  ]),
];
const NAMES = new Map(ENTRIES.map(([name, schema]) => [schema, name]));

/**
 * A copy of a route schema in which each named wire schema carries its name as `title`, which
 * hoistNamedSchemas (openapi-publishing.ts) turns into a component and its references. A copy: the
 * route validates with the schema as it is.
 */
export function titleNamedSchemas<T>(node: T): T {
  if (Array.isArray(node)) return node.map(titleNamedSchemas) as T;
  if (node === null || typeof node !== 'object') return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, titleNamedSchemas(value)]));
  // By identity, or as a copy (Type.Optional copies the schema it wraps: an optional `environment`).
  const name = NAMES.get(node) ?? ENTRIES.find(([, schema]) => isDeepStrictEqual(schema, node))?.[0];
  return (name === undefined ? copy : { ...copy, title: name }) as T;
}
