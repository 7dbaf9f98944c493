import type {
  ApiTokenRecord,
  AuditContext,
  AuditEventRecord,
  CiphertextCount,
  CiphertextKind,
  CiphertextReplacement,
  ConsoleSessionRecord,
  DataSourcePatch,
  DataSourceRecord,
  FieldChanges,
  NewApiToken,
  NewConsoleSession,
  NewDataSource,
  NewUserGroup,
  RateLimit,
  NewSigningKey,
  SchemaRecord,
  SigningKeyRecord,
  StoredCiphertext,
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  Timestamp,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointPatch,
  WebhookEndpointRecord,
  UserGroupPatch,
  UserGroupRecord,
  Workspace,
} from '../domain/models.js';
import type { Environment, Tenant } from '../domain/tenancy.js';
import type { DataSourceChange } from '../domain/data-sources.rules.js';
import type { ApiTokenCheck, ApiTokenState } from '../domain/api-token-check.js';
import type { UsageStore } from '../domain/usage/usage.records.js';

/*
 * The one storage interface. Every method is atomic: a change and its audit event commit together
 * or not at all. Implementations map driver failures to domain errors in one place:
 * unique violations to the matching `*_taken` AppError, "busy"/"connection lost" to `unavailable`.
 * Methods are async so that network-backed engines fit behind the same interface.
 */

export interface WorkspaceStore {
  /** Returns the workspace named `name`, creating it (with an audit event) when absent. */
  ensureWorkspace(name: string, audit: AuditContext): Promise<{ workspace: Workspace; created: boolean }>;
  /** Throws `workspace_name_taken` when the name exists. */
  createWorkspace(name: string, audit: AuditContext): Promise<Workspace>;
  findWorkspaceByName(name: string): Promise<Workspace | null>;
  findWorkspaceById(id: number): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;
}

export interface ApiTokenStore {
  insertApiToken(token: NewApiToken, audit: AuditContext): Promise<ApiTokenRecord>;
  /**
   * Inserts all `tokens` (one workspace) only if that workspace has no API token at all, revoked or
   * not; returns null when it already had one. Safe against concurrent first starts.
   */
  insertApiTokensIfWorkspaceHasNone(
    workspaceId: number,
    tokens: NewApiToken[],
    audit: AuditContext,
  ): Promise<ApiTokenRecord[] | null>;
  /** Only live (not revoked) tokens are found. */
  findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
  /** Live tokens only, in id order. */
  listApiTokens(workspaceId: number): Promise<ApiTokenRecord[]>;
  /**
   * Sets the token's own rate limit (null: back to the server's default) with an `api_token.updated`
   * audit event holding the before and after values, read inside the same transaction; setting the
   * value it has already writes nothing. Null when no live token with that id is in the workspace.
   */
  updateApiTokenRateLimit(
    workspaceId: number,
    id: number,
    rateLimit: RateLimit | null,
    audit: AuditContext,
  ): Promise<ApiTokenRecord | null>;
  /** Returns the revoked token, or null when no live token with that id is in the workspace. */
  revokeApiToken(workspaceId: number, id: number, audit: AuditContext): Promise<ApiTokenRecord | null>;
  /** Bookkeeping, not a change: writes no audit event. */
  recordApiTokenUse(id: number, at: string): Promise<void>;
}

export interface SchemaStore {
  /**
   * Throws `schema_name_taken` when the workspace has a schema of that name, `id_taken` when it has
   * one numbered `id`. Without an id, the schema gets the workspace's next number above every number
   * it has issued or had chosen (never reused).
   */
  insertSchema(workspaceId: number, name: string, audit: AuditContext, id?: number): Promise<SchemaRecord>;
  listSchemas(workspaceId: number): Promise<SchemaRecord[]>;
  findSchemasByIds(workspaceId: number, ids: number[]): Promise<SchemaRecord[]>;
}

/** References to data sources as a mapping or a guard names them, resolved inside one tenant. */
export interface DataSourceRefs {
  ids: number[];
  providedIds: string[];
}

/**
 * Outcome of a change to a data source that user groups may depend on: `in_use` means nothing was
 * changed because `usedBy` groups map to it (counted inside the same transaction).
 */

export interface DataSourceStore {
  /**
   * Throws `data_source_id_taken` when the tenant has a data source with that provided id, `id_taken`
   * when the workspace has one numbered `dataSource.id`; without an id, numbered as schemas are.
   */
  insertDataSource(dataSource: NewDataSource, audit: AuditContext): Promise<DataSourceRecord>;
  listDataSources(workspaceId: number, environment?: Environment): Promise<DataSourceRecord[]>;
  findDataSourceById(workspaceId: number, id: number): Promise<DataSourceRecord | null>;
  /** Every data source of the tenant whose id is in `refs.ids` or whose provided id is in `refs.providedIds`. */
  findDataSources(tenant: Tenant, refs: DataSourceRefs): Promise<DataSourceRecord[]>;
  /**
   * Applies the patch as `planDataSourceUpdate` decides over the locked row (src/domain/data-sources.rules.ts).
   * Throws `data_source_id_taken` when the new provided id collides.
   */
  updateDataSource(
    workspaceId: number,
    id: number,
    patch: DataSourcePatch,
    audit: AuditContext,
  ): Promise<DataSourceChange>;
  /** Deletes it as `planDataSourceDeletion` decides over the locked row. */
  deleteDataSource(workspaceId: number, id: number, audit: AuditContext): Promise<DataSourceChange>;
}

export interface UserGroupUpdate {
  tenant: Tenant;
  teamId: number;
  /** The version the caller read; the update applies only if the row still has it. */
  expectedVersion: number;
  patch: UserGroupPatch;
  updatedAt: string;
}

export interface UserGroupTokenRotation {
  tenant: Tenant;
  currentTokenHash: string;
  newTokenHash: string;
  newTokenCiphertext: string;
  updatedAt: string;
}

export interface UserGroupQuery {
  tenant: Tenant;
  /** Matches a provided-id prefix (exact case) or a name substring (case-insensitive). */
  search?: string;
  /** Only the children of the group with this provided id. */
  parent?: string;
  /** Only groups carrying this tag. */
  tag?: string;
  isDemoGroup?: boolean;
  /** Cursor: only groups with a larger team_id. */
  afterTeamId?: number;
  limit: number;
}

/** Outcome of a delete: done, refused because the row moved on, or refused because groups are linked under it. */
export type UserGroupDeletion =
  { status: 'deleted' } | { status: 'moved' } | { status: 'has_children'; children: number };

/** One write of a batch; `changes` goes into that group's audit event. */
export type UserGroupWrite =
  | { kind: 'create'; group: NewUserGroup; changes: FieldChanges }
  | { kind: 'update'; update: UserGroupUpdate; changes: FieldChanges };

/** What a hot read looks a group up by. */
export type UserGroupLookupKey = 'providedId' | 'tokenHash';

/** One hot read: a group by provided id or token hash in a tenant. */
export interface UserGroupLookup {
  tenant: Tenant;
  key: string;
  /** The caller's API token, to be read in the same snapshot as the group (an unsettled ApiTokenCheck). */
  apiToken?: { id: number; hash: string };
}

export interface UserGroupLookupAnswer {
  group: UserGroupRecord | null;
  /** The API token's state, when the lookup asked for it: not live when it is revoked or unknown. */
  apiToken?: ApiTokenState;
}

/** The reads every engine answers through lookUpUserGroups, batched by src/store/hot-reads.ts. */
export type BatchedUserGroupReads = 'findUserGroupByProvidedId' | 'findUserGroupByTokenHash';

export interface UserGroupStore {
  /**
   * Many lookups at once, in one snapshot (one statement on PostgreSQL, one read transaction on
   * SQLite), answered in the order asked. The two finds below are these lookups, batched.
   */
  lookUpUserGroups(by: UserGroupLookupKey, lookups: UserGroupLookup[]): Promise<UserGroupLookupAnswer[]>;
  /**
   * With an unsettled `check`, the caller's API token is read in the same snapshot as the group and
   * the check settled with what was read (throwing `invalid_api_token` for a token no longer live).
   * The finds asked for in one turn of the event loop share one lookUpUserGroups.
   */
  findUserGroupByProvidedId(tenant: Tenant, providedId: string, check?: ApiTokenCheck): Promise<UserGroupRecord | null>;
  findUserGroupsByProvidedIds(tenant: Tenant, providedIds: string[]): Promise<UserGroupRecord[]>;
  findUserGroupByTeamId(tenant: Tenant, teamId: number): Promise<UserGroupRecord | null>;
  /** In team_id order. */
  listUserGroups(query: UserGroupQuery): Promise<UserGroupRecord[]>;
  /**
   * Applies every write in one transaction, or none: a create whose provided id exists, or an update
   * whose row moved on from `expectedVersion`, throws `concurrent_change`; unique violations throw
   * their `*_taken` code. One audit event per write (`user_group.created` / `user_group.updated`).
   */
  writeUserGroups(writes: UserGroupWrite[], audit: Omit<AuditContext, 'changes'>): Promise<void>;
  /** `check` as for findUserGroupByProvidedId. */
  findUserGroupByTokenHash(tenant: Tenant, tokenHash: string, check?: ApiTokenCheck): Promise<UserGroupRecord | null>;
  /**
   * Creates the group unless the tenant already has one with that provided id; in that case returns
   * the existing one untouched. Exactly one of any number of concurrent callers sees `created: true`.
   */
  insertUserGroupIfAbsent(
    group: NewUserGroup,
    audit: AuditContext,
  ): Promise<{ group: UserGroupRecord; created: boolean }>;
  /**
   * Applies the patch if the row still has `expectedVersion`; returns the new row, or null when the
   * row is gone or moved on. Throws `user_group_id_taken` when a rename collides. A patch that sets a
   * parent is checked against the tree inside the transaction, serialised with every other change of
   * the tenant's tree (`unknown_parent`, `hierarchy_cycle`, `hierarchy_too_deep`); so is a create.
   */
  updateUserGroup(update: UserGroupUpdate, audit: AuditContext): Promise<UserGroupRecord | null>;
  /** Swaps the token only while `currentTokenHash` is still the group's token; null otherwise. */
  rotateUserGroupToken(rotation: UserGroupTokenRotation, audit: AuditContext): Promise<UserGroupRecord | null>;
  /**
   * Deletes the group only if it still has `expectedVersion` (else `moved`) and no group has it as
   * parent (else `has_children`, counted inside the same transaction).
   */
  deleteUserGroup(
    tenant: Tenant,
    teamId: number,
    expectedVersion: number,
    audit: AuditContext,
  ): Promise<UserGroupDeletion>;
}

export interface AuditEventQuery {
  workspaceId: number;
  environment?: Environment;
  teamId?: number;
  action?: string;
  /** Inclusive lower bound on `at`. */
  since?: string;
  /** Exclusive upper bound on `at`. */
  until?: string;
  /** Cursor: only events with a smaller id (the list is newest first). */
  beforeId?: number;
  limit: number;
}

export interface AuditStore {
  listAuditEvents(query: AuditEventQuery): Promise<AuditEventRecord[]>;
}

/**
 * What key rotation needs: every column that holds TokenCipher ciphertexts, read and rewritten by
 * key id. A ciphertext's key id is its characters 4 to 11 (`v1.<key id>.…`, src/domain/secrets.ts).
 * Re-encryption is not a change of the row: versions, update times and audit events stay as they are.
 */
export interface CiphertextStore {
  /** Up to `limit` ciphertexts of `kind` not made under `keyId`, of rows whose id is above `afterId`, in id order. */
  listCiphertextsNotUnderKey(
    kind: CiphertextKind,
    keyId: string,
    afterId: number,
    limit: number,
  ): Promise<StoredCiphertext[]>;
  /**
   * In one transaction, writes each replacement whose row still holds the ciphertext it was read
   * with (a compare-and-swap: a row changed, rotated or deleted since is left alone); returns how
   * many were written.
   */
  replaceCiphertexts(replacements: CiphertextReplacement[]): Promise<number>;
  /** How many ciphertexts of each kind each key id encrypts (kinds and keys with none are absent). */
  countCiphertextsByKey(): Promise<CiphertextCount[]>;
  /** Writes the audit event `encryption_key.rotated` (changes from `audit.changes`) into a workspace. */
  recordKeyRotation(workspaceId: number, audit: AuditContext): Promise<void>;
}

/** One idempotency key of one API token, as the store knows it. */
export interface IdempotencyKeyRef {
  apiTokenId: number;
  /** SHA-256 of the key: the key itself is never stored. */
  keyHash: string;
}

/** A claim as the service made it; `createdAt` tells it apart from a later claim of the same key. */
export interface IdempotencyClaimRef extends IdempotencyKeyRef {
  createdAt: string;
}

export interface IdempotencyClaimAttempt extends IdempotencyClaimRef {
  fingerprint: string;
  /** A record created at or before this is expired: it is replaced as if absent. */
  expiredBefore: string;
  /** An unfinished claim created at or before this is abandoned: a request of the same fingerprint takes it over. */
  abandonedBefore: string;
  /** The most live (unexpired) keys the API token may hold, this claim's included. */
  maxLiveKeys: number;
}

export interface IdempotencyKeyRecord {
  fingerprint: string;
  createdAt: string;
  /** The stored response (ciphertext), or null while the claimant is still at work. */
  response: string | null;
}

/** Outcome of a claim: ours, the live record that stands in the way, or none because the token holds too many keys. */
export type IdempotencyClaimResult =
  { claimed: true } | { claimed: false; record: IdempotencyKeyRecord } | { claimed: false; limitReached: true };

/** Bookkeeping of safe retries: no method writes an audit event, and none is part of a change's transaction. */
export interface IdempotencyStore {
  /**
   * Inserts an unfinished claim unless a live record holds the key; an expired record, or an abandoned
   * claim with the same fingerprint, is replaced. Of concurrent claims of one key exactly one wins.
   * A claim that would take the token's live keys beyond `maxLiveKeys` is not made, also when claims
   * of one token race.
   */
  claimIdempotencyKey(attempt: IdempotencyClaimAttempt): Promise<IdempotencyClaimResult>;
  /** Stores the response of the claim, if the claim is still this one and unfinished; false otherwise. */
  completeIdempotencyKey(claim: IdempotencyClaimRef, response: string): Promise<boolean>;
  /** Deletes the claim if it is still this one and unfinished, so that a retry runs the request again. */
  releaseIdempotencyKey(claim: IdempotencyClaimRef): Promise<void>;
  /** Deletes at most `limit` records created at or before `createdBefore`; returns how many went. */
  purgeIdempotencyKeys(createdBefore: string, limit: number): Promise<number>;
}

/** How a rotation came out: done (with the keys a forced one dropped), or refused by the published-key bound. */
export type SigningKeyRotation =
  | { status: 'rotated'; current: SigningKeyRecord; retired: SigningKeyRecord | null; dropped: SigningKeyRecord[] }
  | { status: 'limit_reached'; published: number };

/**
 * The embed-token signing keys, each of one issuer: a workspace's environment (a Tenant). Reads take
 * one issuer's keys by index, never every key a workspace ever had.
 */
export interface SigningKeyStore {
  /** The issuer's current key and the keys retired after `retiredAfter`, newest first (the current one leads). */
  listSigningKeys(issuer: Tenant, retiredAfter: string): Promise<SigningKeyRecord[]>;
  /** The issuer's current key, if it has one. */
  findCurrentSigningKey(issuer: Tenant): Promise<SigningKeyRecord | null>;
  /** The issuer's key `kid`, retired or not; null for a kid of no key or of another issuer's. */
  findSigningKey(issuer: Tenant, kid: string): Promise<SigningKeyRecord | null>;
  /**
   * Makes `key` its issuer's first current key, audited, unless it has one already (another
   * instance won the race): then nothing is written and the existing current key is returned.
   */
  insertFirstSigningKey(key: NewSigningKey, context: AuditContext): Promise<SigningKeyRecord>;
  /**
   * In one transaction, serialised with every other rotation of the issuer: reads the issuer's keys
   * retired after `publishedSince` (and the current one), applies `planSigningKeyRotation`
   * (src/domain/signing-keys.rules.ts) with `force`, and unless refused deletes the keys it drops,
   * retires the current key (if any) at `key.createdAt` and makes `key` current, audited.
   */
  rotateSigningKey(
    key: NewSigningKey,
    context: AuditContext,
    bound: { publishedSince: string; force: boolean },
  ): Promise<SigningKeyRotation>;
  /**
   * When the service began signing low-S (SPEC §10): when the migration that brought it was applied.
   * A high-S signature on a token issued from then on is refused by verify.
   */
  lowSignaturesSince(): Promise<string>;
}

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

/** Webhook endpoints and the outbox of their deliveries (SPEC §13). Events are written by the changes themselves. */
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

/** A console session found by its hash, with the API token it acts as. */
export interface FoundConsoleSession {
  session: ConsoleSessionRecord;
  apiToken: ApiTokenRecord;
}

/**
 * Admin console sessions (SPEC §14), in the database so that every instance knows them. Whether one
 * is still live is the domain's decision (src/domain/console-sessions.rules.ts); the store keeps the
 * times, and `expires_at` only to purge by.
 */
export interface ConsoleSessionStore {
  /** Writes the session with its `console_session.created` audit event, in one transaction. */
  insertConsoleSession(session: NewConsoleSession, audit: AuditContext): Promise<ConsoleSessionRecord>;
  /** The session with that hash while its API token is live; null otherwise (a revoked token ends its sessions at once). */
  findConsoleSession(idHash: string): Promise<FoundConsoleSession | null>;
  /** Records a use; bookkeeping, not a change: no audit event. */
  touchConsoleSession(id: number, lastSeenAt: string, expiresAt: string): Promise<void>;
  /** Deletes the session with its `console_session.ended` audit event; false when it was gone already. */
  deleteConsoleSession(id: number, audit: AuditContext): Promise<boolean>;
  /** Deletes at most `limit` sessions whose `expires_at` is at or before `expiredBy`; returns how many went. */
  purgeConsoleSessions(expiredBy: string, limit: number): Promise<number>;
}

export interface ConnectionStats {
  total: number;
  idle: number;
  /** Callers queued for a connection. */
  waiting: number;
}

export interface Store
  extends
    WorkspaceStore,
    ApiTokenStore,
    SchemaStore,
    DataSourceStore,
    UserGroupStore,
    AuditStore,
    CiphertextStore,
    IdempotencyStore,
    SigningKeyStore,
    WebhookStore,
    ConsoleSessionStore,
    UsageStore {
  /** Applies pending migrations; safe to call from several processes at once. Resolves with how many it applied. */
  migrate(): Promise<number>;
  /**
   * Brings the planner's statistics of the service's tables up to date after a bulk change (ANALYZE on
   * PostgreSQL; nothing on SQLite, whose planner needs none for the service's statements). Never
   * fails: what it could not do (a role that may not analyse) comes back as warnings.
   */
  refreshStatistics(): Promise<string[]>;
  /** What about the database server's settings an operator should hear at start (e.g. autovacuum off). */
  serverWarnings(): Promise<string[]>;
  /** Resolves when the database answers a trivial query; throws `unavailable` otherwise. */
  ping(): Promise<void>;
  /** Connection pool figures for /metrics; null for an engine without a pool. */
  connectionStats(): ConnectionStats | null;
  close(): Promise<void>;
}
