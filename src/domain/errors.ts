/**
 * The one catalogue of errors: every code with its status, and below, every failure the domain and
 * the store raise with its message and the request field it names. Every failure the service
 * reports is an AppError carrying one of these codes; the HTTP layer turns it into the envelope and
 * its headers, the CLI into a message on stderr.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_request: 400,
  invalid_json: 400,
  invalid_field: 400,
  missing_field: 400,
  unknown_field: 400,
  unknown_schema: 400,
  unknown_data_source: 400,
  data_source_schema_mismatch: 400,
  unknown_parent: 400,
  unresolved_property: 400,
  unauthenticated: 401,
  invalid_api_token: 401,
  invalid_embed_token: 401,
  embed_session_ended: 401,
  insufficient_scope: 403,
  invalid_csrf_token: 403,
  token_sign_in_off: 403,
  origin_not_allowed: 403,
  user_group_not_found: 404,
  api_token_not_found: 404,
  data_source_not_found: 404,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  user_group_id_taken: 409,
  user_group_mismatch: 409,
  data_source_mismatch: 409,
  data_source_id_taken: 409,
  user_group_token_taken: 409,
  schema_name_taken: 409,
  id_taken: 409,
  ids_exhausted: 409,
  data_source_in_use: 409,
  concurrent_change: 409,
  hierarchy_cycle: 409,
  hierarchy_too_deep: 409,
  user_group_has_children: 409,
  workspace_name_taken: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_progress: 409,
  signing_key_limit: 409,
  webhook_endpoint_limit: 409,
  webhook_delivery_delivered: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  in_flight_limit: 429,
  idempotency_key_limit: 429,
  headers_too_large: 431,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Where in a file of many inputs (a sync's) the input at fault is: an NDJSON line (from 1) or an array index (from 0). */
export type InputPosition = { line: number } | { index: number };

export interface AppErrorOptions {
  /** The request field at fault, when exactly one is. */
  field?: string;
  /** Seconds the caller should wait before trying again: a busy database, an empty rate-limit bucket, a request still running. */
  retryAfterSeconds?: number;
  /** The input of a file of many at fault, when one is. */
  at?: InputPosition;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly at: InputPosition | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.at = options.at;
  }
}

/** "Line 7" or "Item 3": how a message names an input of a file of many. */
export const positionText = (at: InputPosition): string => ('line' in at ? `Line ${at.line}` : `Item ${at.index}`);

/** The same refusal, naming the input of a file of many it concerns (first in its message too). */
export function atPosition(error: AppError, at: InputPosition): AppError {
  if (error.at) return error;
  return new AppError(error.code, `${positionText(at)}: ${error.message}`, {
    field: error.field,
    retryAfterSeconds: error.retryAfterSeconds,
    at,
    cause: error.cause,
  });
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** Seconds a client should wait before retrying when the database is unreachable or busy. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

const quoted = (value: unknown) => JSON.stringify(value);
const IDEMPOTENCY_KEY = 'Idempotency-Key';
const plural = (count: number, one: string, many: string) => (count === 1 ? `1 ${one}` : `${count} ${many}`);

/** The unique constraints a caller can run into; each engine recognises them in its own driver errors. */
export type UniqueConstraint =
  | 'user_group_provided_id'
  | 'user_group_token'
  | 'data_source_provided_id'
  | 'schema_name'
  | 'workspace_name'
  | 'schema_number'
  | 'data_source_number';

const TAKEN: Record<UniqueConstraint, [ErrorCode, string, string]> = {
  user_group_provided_id: [
    'user_group_id_taken',
    'new_user_group_id',
    'Another user group in this environment already has that id.',
  ],
  // Only an import that carries tokens can hit this: a token copied from another group or tenant.
  user_group_token: ['user_group_token_taken', 'token', 'Another user group already has that token.'],
  data_source_provided_id: [
    'data_source_id_taken',
    'provided_id',
    'A data source in this environment already has that provided id.',
  ],
  schema_name: ['schema_name_taken', 'name', 'A schema with that name already exists in this workspace.'],
  workspace_name: ['workspace_name_taken', 'name', 'A workspace with that name already exists.'],
  schema_number: ['id_taken', 'id', 'A schema with that id already exists in this workspace.'],
  data_source_number: ['id_taken', 'id', 'A data source with that id already exists in this workspace.'],
};

/** The failures of the domain and the store, by what went wrong; fields are named as the API and the CLI name them. */
export const failure = {
  unavailable: (cause: unknown) =>
    new AppError('unavailable', 'The database is unavailable; retry shortly.', {
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      cause,
    }),
  insufficientScope: (needed: string) =>
    new AppError('insufficient_scope', `This operation needs an API token with the "${needed}" scope.`),
  invalidApiToken: () => new AppError('invalid_api_token', 'The API token is unknown or revoked.'),
  /** A console session cookie that names no live session: unknown, signed out, expired, or its API token revoked. */
  tokenSignInOff: () =>
    new AppError(
      'token_sign_in_off',
      'Signing in to the console with an API token is switched off on this server: sign in through the identity provider.',
    ),
  consoleSessionEnded: () =>
    new AppError(
      'unauthenticated',
      'The console session has ended (signed out, expired or its API token revoked); sign in again.',
    ),
  apiTokenNotFound: (id: number) =>
    new AppError('api_token_not_found', `No live API token with id ${id} in this workspace.`),
  rateLimitOutOfRange: (part: 'per_second' | 'burst', minimum: number, maximum: number) =>
    new AppError(
      'invalid_field',
      part === 'per_second'
        ? `A rate limit's per_second must be from ${minimum} to ${maximum}.`
        : `A rate limit's burst must be a whole number from ${minimum} to ${maximum}.`,
      { field: 'rate_limit' },
    ),
  workspaceNotFound: (name: string) =>
    new AppError('not_found', `Workspace "${name}" does not exist.`, { field: 'workspace' }),

  /**
   * No group matches: to the group API an unknown id or token, or another tenant's, all answered alike
   * (docs/api.md#workspaces-and-environments); an admin lookup names what it looked for (`which`: `"acme"`, `with team_id 7`).
   */
  userGroupNotFound: (which?: string) =>
    new AppError(
      'user_group_not_found',
      which === undefined
        ? 'No user group matches in this environment.'
        : `No user group ${which} in this environment.`,
    ),
  /** A revoke names exactly one of a token and a group; `both` when it named the two. */
  revokeWhat: (both: boolean) =>
    both
      ? new AppError('invalid_field', 'Give "embed_token" or "user_group_id", not both.', { field: 'user_group_id' })
      : new AppError(
          'missing_field',
          'Give "embed_token" (one token) or "user_group_id" (every current token of the group).',
        ),
  nameTheGroup: () => new AppError('missing_field', 'Give "current_token" or "user_group_id" to name the group.'),
  userGroupMismatch: () =>
    new AppError('user_group_mismatch', '"current_token" and "user_group_id" name different user groups.'),
  dataSourceNotMapped: (providedId: string) =>
    new AppError('data_source_mismatch', `The user group's mapping does not include data source "${providedId}".`, {
      field: 'data_source_provided_id',
    }),
  importTokenShape: () =>
    new AppError(
      'invalid_field',
      '"token" must be ugt_ followed by 64 lowercase hex characters, or a token of the hosted product: 32 to 256 visible ASCII characters without "." (a JWS-shaped token is an embed token, never a group token).',
      { field: 'token' },
    ),
  /** An import line whose token differs from its group's current one: only an explicit replace rotates it. */
  importTokenDiffers: () =>
    new AppError(
      'invalid_field',
      "The group already has another token; an import replaces a group's token only when asked (replace_tokens=true, or --replace-tokens), as a rotation.",
      { field: 'token' },
    ),
  /** An import over HTTP writes only into its API token's environment. */
  importOtherEnvironment: (environment: string) =>
    new AppError(
      'invalid_field',
      `An import over HTTP writes into its API token's environment only: "api_environment_tag" must be ${quoted(environment)} or null.`,
      { field: 'api_environment_tag' },
    ),
  /** The HTTP client went away: what was written stays (rerunning the import changes nothing of it), nothing more is. */
  importStopped: () =>
    new AppError('unavailable', 'The import stopped: its client went away. Run it again to finish.', {
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    }),
  concurrentImportChange: () =>
    new AppError('concurrent_change', 'The group changed while the import ran; run the import again.'),
  importTooLarge: (maxGroups: number) =>
    new AppError('invalid_request', `An import takes at most ${maxGroups} user groups a request; split the file.`),
  invalidCatalogueId: (maximum: number) =>
    new AppError('invalid_field', `"id" must be a whole number from 1 to ${maximum}.`, { field: 'id' }),
  /** Every number up to the bound is issued (or was chosen): the next one would not fit. */
  idsExhausted: (what: 'schema' | 'data source', maximum: number) =>
    new AppError(
      'ids_exhausted',
      `This workspace has issued ${what} id ${maximum}, the largest there is; choose a free id with "id".`,
      { field: 'id' },
    ),
  batchGroupCreated: (providedId: string) =>
    new AppError(
      'concurrent_change',
      `A user group with id ${quoted(providedId)} was created meanwhile, so the batch wrote nothing.`,
    ),
  batchGroupChanged: (teamId: number) =>
    new AppError(
      'concurrent_change',
      `User group ${teamId} changed or was deleted meanwhile, so the batch wrote nothing.`,
    ),
  taken: (constraint: UniqueConstraint, cause?: unknown) => {
    const [code, field, message] = TAKEN[constraint];
    return new AppError(code, message, { field, cause });
  },

  propertiesTooLarge: (maxBytes: number) =>
    new AppError('invalid_field', `"properties" must be at most ${maxBytes} bytes when serialized.`, {
      field: 'properties',
    }),
  nestedTooDeeply: (field: string, maxDepth: number) =>
    new AppError('invalid_field', `"${field}" must be nested at most ${maxDepth} levels deep.`, { field }),
  invalidProperties: (rule: string) => new AppError('invalid_field', `"properties" ${rule}.`, { field: 'properties' }),
  /** A tag that arrived without a schema (a CLI option) and is not one (contract.constants.ts: TAG); `field` as the API names it. */
  notATag: (field: string) =>
    new AppError('invalid_field', `"${field}" must be a tag: 1 to 64 characters without control characters.`, {
      field,
    }),

  unknownSchema: (schemaId: number | string, field: 'mapping' | 'schema_id') =>
    new AppError('unknown_schema', `Schema ${schemaId} does not exist.`, { field }),
  unknownDataSource: (ref: unknown) =>
    new AppError('unknown_data_source', `Data source ${quoted(ref)} does not exist in this environment.`, {
      field: 'mapping',
    }),
  dataSourceSchemaMismatch: (ref: unknown, servedSchemaId: number, schemaId: number) =>
    new AppError(
      'data_source_schema_mismatch',
      `Data source ${quoted(ref)} serves schema ${servedSchemaId}, not schema ${schemaId}.`,
      { field: 'mapping' },
    ),
  /** A mapping row whose data source went away between the domain's check and the write. */
  vanishedDataSource: (cause: unknown) =>
    new AppError('unknown_data_source', 'A data source of the mapping no longer exists in this environment.', {
      field: 'mapping',
      cause,
    }),
  /** A mapping row whose data source changed schema between the domain's check and the write. */
  mappedSchemaChanged: (cause: unknown) =>
    new AppError(
      'data_source_schema_mismatch',
      'A data source of the mapping now serves another schema; map it under that schema or choose another data source.',
      {
        field: 'mapping',
        cause,
      },
    ),
  dataSourceNotFound: (id: number) =>
    new AppError('data_source_not_found', `No data source with id ${id} in this environment.`),
  dataSourceInUse: (id: number, usedBy: number, whileInUse: string) =>
    new AppError(
      'data_source_in_use',
      `${plural(usedBy, 'user group maps', 'user groups map')} to data source ${id}: ${whileInUse}.`,
    ),

  unknownParent: (parentProvidedId: string) =>
    new AppError(
      'unknown_parent',
      `No user group ${quoted(parentProvidedId)} exists in this environment to be the parent.`,
      { field: 'parent_user_group_id' },
    ),
  /** A group linked under a parent that was deleted between the check and the write's commit. */
  vanishedParent: (cause: unknown) =>
    new AppError('unknown_parent', 'The parent user group no longer exists in this environment.', {
      field: 'parent_user_group_id',
      cause,
    }),
  hierarchyCycle: (parentProvidedId: string) =>
    new AppError(
      'hierarchy_cycle',
      `User group ${quoted(parentProvidedId)} is the group itself or one of its descendants, so it cannot be its parent.`,
      {
        field: 'parent_user_group_id',
      },
    ),
  hierarchyTooDeep: (parentProvidedId: string, depth: number, maxDepth: number) =>
    new AppError(
      'hierarchy_too_deep',
      `Under ${quoted(parentProvidedId)} the tree would be ${depth} levels deep; at most ${maxDepth} are allowed (a root and three levels below it).`,
      { field: 'parent_user_group_id' },
    ),
  computedPropertiesTooLarge: (
    field: 'properties' | 'parent_user_group_id',
    providedId: string,
    bytes: number,
    maxBytes: number,
  ) =>
    new AppError(
      'invalid_field',
      `The computed properties of user group ${quoted(providedId)} would be ${bytes} bytes when serialized; at most ${maxBytes} are allowed (its properties merged with its ancestors').`,
      { field },
    ),
  syncDuplicate: (providedId: string, first: InputPosition) =>
    new AppError(
      'invalid_field',
      `User group ${quoted(providedId)} appears twice in the file (first at ${positionText(first).toLowerCase()}).`,
      { field: 'user_group_id' },
    ),
  syncTooLarge: (maxGroups: number) =>
    new AppError('invalid_request', `A sync takes at most ${maxGroups} user groups; split the file.`),
  syncPrunesParent: (parentProvidedId: string, childProvidedId: string) =>
    new AppError(
      'user_group_has_children',
      `Pruning would delete user group ${quoted(parentProvidedId)}, the parent of ${quoted(childProvidedId)}, which stays; keep the parent in the file or move the child.`,
      { field: 'prune' },
    ),
  /** Counted before the plan reads any group in full: a prune deletes no more groups than a sync may write. */
  syncPruneTooLarge: (tag: string, maxGroups: number) =>
    new AppError(
      'invalid_request',
      `Pruning tag ${quoted(tag)} would delete more than ${maxGroups} user groups; a sync deletes at most ${maxGroups}. Keep more of them in the file, or remove the tag from some, and run it again.`,
      { field: 'prune' },
    ),
  /** The server is shutting down, or the client went away: stopped between two steps, nothing written. */
  syncStopped: () =>
    new AppError(
      'unavailable',
      'The sync was stopped before it wrote anything (the server is shutting down); run it again.',
      {
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      },
    ),
  syncPlanMoved: () =>
    new AppError(
      'concurrent_change',
      'The user groups kept changing while the sync was being applied, so it wrote nothing; run it again.',
    ),
  computedAccessRulesTooMany: (
    field: 'access_rules' | 'parent_user_group_id',
    providedId: string,
    count: number,
    max: number,
  ) =>
    new AppError(
      'invalid_field',
      `User group ${quoted(providedId)} would have ${count} access rules with its ancestors'; at most ${max} are allowed.`,
      { field },
    ),
  hasChildren: (providedId: string, children: number) =>
    new AppError(
      'user_group_has_children',
      `User group ${quoted(providedId)} is the parent of ${plural(children, 'group', 'groups')}; detach or delete them first.`,
    ),

  // The key travels in a request header; the error names it as the field at fault.
  idempotencyKeyShape: () =>
    new AppError('invalid_field', 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).', {
      field: IDEMPOTENCY_KEY,
    }),
  idempotencyKeyLimit: (maxLiveKeys: number) =>
    new AppError(
      'idempotency_key_limit',
      `This API token holds ${maxLiveKeys} live Idempotency-Keys, the most it may; reuse none, retry without a key, or wait until the oldest expire (24 h after their first use).`,
      { field: IDEMPOTENCY_KEY },
    ),
  idempotencyBytesLimit: (maxBytes: number) =>
    new AppError(
      'idempotency_key_limit',
      `The responses kept for this API token's Idempotency-Keys reach ${maxBytes / (1024 * 1024)} MiB, the most it may keep; retry without a key, or wait until the oldest expire (24 h after their first use).`,
      { field: IDEMPOTENCY_KEY },
    ),
  idempotencyKeyReused: () =>
    new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was used for another request (method, path, query or body); send a new key with a new request.',
      {
        field: IDEMPOTENCY_KEY,
      },
    ),
  idempotencyKeyInProgress: () =>
    new AppError(
      'idempotency_key_in_progress',
      'The first request with this Idempotency-Key is still running; retry shortly.',
      {
        field: IDEMPOTENCY_KEY,
        retryAfterSeconds: 1,
      },
    ),

  embedTokenTooLarge: (maxKiB: number, cause: 'properties' | 'access_rules' = 'properties') =>
    new AppError(
      'invalid_field',
      cause === 'properties'
        ? `The embed token would be larger than ${maxKiB} KiB: send fewer or smaller properties.`
        : `The embed token would be larger than ${maxKiB} KiB because of the group's access rules: give it (or its ancestors) fewer or shorter rules.`,
      { field: cause },
    ),
  perViewPropertyOverride: (key: string) =>
    new AppError(
      'invalid_field',
      `The group or an ancestor sets property ${quoted(key)}: per-view properties may only add keys, never override the owner's.`,
      { field: `properties.${key}` },
    ),
  signingKeyLimit: (published: number, maxPublished: number) =>
    new AppError(
      'signing_key_limit',
      `This environment's issuer publishes ${published} signing keys, at most ${maxPublished} may be published: rotate again once the oldest retires (a day after its retirement), or force the rotation (for a leaked key), which drops the oldest key and voids the tokens it signed.`,
    ),
  /** A refresh with a token that is not currently valid: expired, forged, revoked, another issuer's. */
  invalidEmbedToken: () =>
    new AppError(
      'invalid_embed_token',
      "The embed token is not valid (expired, revoked, malformed or not this service's): mint a new one from your backend.",
      { field: 'token' },
    ),
  embedSessionEnded: (why: 'no_session' | 'ended' | 'inactive') =>
    new AppError(
      'embed_session_ended',
      why === 'no_session'
        ? 'The embed token was minted without a session (session_seconds): it cannot be refreshed; mint a new one.'
        : why === 'ended'
          ? "The embed token's session has ended: mint a new one from your backend."
          : 'The embed token was not refreshed within its inactivity interval: mint a new one from your backend.',
      { field: 'token' },
    ),
  refreshOrigin: (pinned: boolean) =>
    new AppError(
      'origin_not_allowed',
      pinned
        ? "The request's Origin is not the origin the embed token was minted for."
        : 'The embed token was minted without an origin: a browser cannot refresh it (mint it with "origin").',
      { field: 'Origin' },
    ),
  refreshRateLimited: (perMinute: number, burst: number, retryAfterSeconds: number) =>
    new AppError(
      'rate_limited',
      `An embed-token session may refresh ${perMinute} times a minute, up to ${burst} at once; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    ),
  notFormMediaType: () =>
    new AppError(
      'unsupported_media_type',
      'Send the introspection request as a form, with "Content-Type: application/x-www-form-urlencoded" (RFC 7662), e.g. token=<embed token>.',
    ),
  singleUseSession: () =>
    new AppError(
      'invalid_field',
      'A single-use token cannot have a session: give either single_use or session_seconds, not both.',
      { field: 'single_use' },
    ),
  inactivityWithoutSession: () =>
    new AppError(
      'invalid_field',
      '"inactivity_seconds" needs "session_seconds": it bounds the gaps within a session.',
      {
        field: 'inactivity_seconds',
      },
    ),
  introspectionIssuer: () =>
    new AppError(
      'unauthenticated',
      "Introspection at an issuer takes an API token of that issuer's own workspace and environment.",
    ),
  embedOrigin: () =>
    new AppError(
      'invalid_field',
      '"origin" must be a web origin such as https://app.example.com: a scheme, a host and a port at most, no path.',
      { field: 'origin' },
    ),

  webhookEndpointNotFound: (id: number) =>
    new AppError('webhook_endpoint_not_found', `No webhook endpoint with id ${id} in this environment.`),
  webhookDeliveryNotFound: (id: number) =>
    new AppError('webhook_delivery_not_found', `No webhook delivery with id ${id} in this environment.`),
  webhookEndpointLimit: (max: number) =>
    new AppError(
      'webhook_endpoint_limit',
      `This environment has ${max} webhook endpoints, the most it may have; delete one to add another.`,
    ),
  webhookDeliveryDelivered: (id: number) =>
    new AppError(
      'webhook_delivery_delivered',
      `Webhook delivery ${id} was delivered; it is not sent again (it would carry an older state than later events). Only a pending or failed delivery can be retried.`,
    ),
  emptyWebhookPatch: () => new AppError('bad_request', 'Give at least one of url, events, description, enabled.'),
  webhookEvents: (rule: string) => new AppError('invalid_field', rule, { field: 'events' }),
  webhookUrl: (rule: string) => new AppError('invalid_field', `url ${rule}.`, { field: 'url' }),

  /** An access rule's field (`access_rules[3].column`) that breaks `rule` (docs/api.md#access-rules). */
  accessRuleField: (field: string, rule: string) => new AppError('invalid_field', `"${field}" ${rule}.`, { field }),
  notAnAccessRuleField: (field: string) =>
    new AppError('unknown_field', `"${field}" is not a field of an access rule.`, { field }),
  /** A field an access rule lacks; `why` says what requires it (the operator takes a value). */
  accessRuleFieldMissing: (field: string, why?: string) =>
    new AppError('missing_field', `"${field}" is required${why === undefined ? '' : `: ${why}`}.`, { field }),
  unknownRuleSchema: (schemaId: number, field: string) =>
    new AppError('unknown_schema', `Schema ${schemaId} does not exist in this workspace.`, { field }),
  /** A rule's property reference that the group's computed properties do not fill: none such, or `defect`. */
  unresolvedProperty: (
    index: number,
    rule: { table: string; column: string; op: string },
    key: string,
    defect: string | undefined,
  ) =>
    new AppError(
      'unresolved_property',
      `Access rule ${index} (${rule.table}.${rule.column} ${rule.op}) refers to the property ${quoted(key.slice(0, 64))}: ${
        defect === undefined
          ? 'the group has no such computed property'
          : `its value${defect.startsWith('[') ? '' : ' '}${defect}`
      }.`,
      { field: `access_rules[${index}]` },
    ),

  /** A usage read's parameter (since, until, metric, limit) outside what it takes; `message` says what it takes. */
  usageParameter: (field: string, message: string) => new AppError('invalid_field', message, { field }),

  /** A person's console session past its renewal time: the identity provider decides again. */
  consoleSessionDueForRenewal: () =>
    new AppError(
      'unauthenticated',
      'The console session is due for renewal: sign in again through the identity provider.',
    ),
  personSessionNotFound: (id: number | string) =>
    new AppError('not_found', `No console session of a person with id ${id} in this workspace.`),
  /** A person whose identity provider groups grant less than `needed` in `environment`. */
  insufficientConsoleAccess: (needed: string, environment: string) =>
    new AppError(
      'insufficient_scope',
      `This needs "${needed}" console access in ${environment}; the identity provider's groups give you less.`,
    ),
};
