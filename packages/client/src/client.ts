import { createTransport, credentialsOf, type TransportOptions } from './transport.js';
import { refreshEmbedToken, type RefreshedEmbedToken } from './embed-session.js';
import type {
  ApiToken,
  AuditEvent,
  AuditQuery,
  ConsoleSession,
  CreateApiTokenBody,
  CreateDataSourceBody,
  CreateSchemaBody,
  DataSource,
  DeleteUserGroupBody,
  EmbedTokenIntrospection,
  GetOrCreateUserGroupBody,
  IssuedApiToken,
  ListUserGroupsQuery,
  MintedEmbedToken,
  RevokedEmbedTokens,
  MintEmbedTokenBody,
  Page,
  PersonSession,
  PersonSessionsQuery,
  Schema,
  SigningKey,
  SigningKeyRotation,
  SyncOptions,
  ImportOptions,
  ImportUserGroupLine,
  UserGroupImport,
  SyncUserGroupLine,
  TopUsage,
  TopUsageQuery,
  UsageSeries,
  UsageSeriesQuery,
  UpdateApiTokenBody,
  UpdateDataSourceBody,
  UpdateUserGroupBody,
  UserGroup,
  UserGroupSync,
  VerifiedToken,
  CreateWebhookEndpointBody,
  IssuedWebhookEndpoint,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhookEndpoint,
} from './types.js';

export type ClientOptions = TransportOptions;

/** Per call: the Idempotency-Key to send with a write (one is made when absent). */
export interface WriteOptions {
  idempotencyKey?: string;
}

type Environment = 'Customer' | 'Testing';
/** Admin calls act in the API token's environment unless told another (`?environment=`). */
type InEnvironment = {
  environment?: Environment;
};
/** How long a sync's one try may take (see syncUserGroups). */
const SYNC_TIMEOUT_MS = 600_000;
const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));

/**
 * A method for every operation of the service (docs/api.md#endpoints). Failures throw UgsError; writes
 * are retried safely (see transport.ts).
 */
export function createClient(options: ClientOptions) {
  const credentials = credentialsOf(options);
  const send = createTransport(options, credentials);
  /** Every list as one shape: the service's unpaginated lists (no next_cursor) are one last page. */
  const page = async <K extends string, T>(
    plural: K,
    path: string,
    query: Record<string, string | number | undefined> = {},
  ): Promise<Page<T>> => {
    const body = await send<Record<K, T[]> & { next_cursor?: string | null }>({ method: 'GET', path, query });
    return { items: body[plural], next_cursor: body.next_cursor ?? null };
  };
  /** The console session an answer names; its CSRF token goes with every later request. */
  const session = (answer: { session: ConsoleSession | null }): ConsoleSession | null => {
    credentials.setCsrfToken(answer.session?.csrf_token ?? null);
    return answer.session;
  };

  return {
    /** GET /api/user: the group, created when it does not exist (write scope). Sent as a query string, which fetch can carry on GET. */
    async getOrCreateUserGroup(
      body: GetOrCreateUserGroupBody,
    ): Promise<{ newUserGroup: boolean; userGroup: UserGroup }> {
      // A GET carries its fields in the query string (fetch sends no GET body); a null parent is no parent.
      const parent = body.parent_user_group_id ?? undefined;
      const query = {
        user_group_id: String(body.user_group_id),
        name: body.name,
        mapping: json(body.mapping),
        properties: json(body.properties),
        parent_user_group_id: parent === undefined ? undefined : String(parent),
        is_demo_group: json(body.is_demo_group),
        tags: json(body.tags),
        access_rules: json(body.access_rules),
      };
      const answer = await send<{ new_user_group: boolean; user_group: UserGroup }>({
        method: 'GET',
        path: '/api/user',
        query,
      });
      return { newUserGroup: answer.new_user_group, userGroup: answer.user_group };
    },
    async updateUserGroup(body: UpdateUserGroupBody, write: WriteOptions = {}): Promise<UserGroup> {
      return (await send<{ user_group: UserGroup }>({ method: 'PUT', path: '/api/user', body, ...write })).user_group;
    },
    /** POST /api/user: a new token; retried with the same Idempotency-Key, a lost answer still names the one new token. */
    async rotateUserGroupToken(currentToken: string, write: WriteOptions = {}): Promise<UserGroup> {
      return (
        await send<{ user_group: UserGroup }>({
          method: 'POST',
          path: '/api/user',
          body: { current_token: currentToken },
          ...write,
        })
      ).user_group;
    },
    async deleteUserGroup(body: DeleteUserGroupBody, write: WriteOptions = {}): Promise<void> {
      await send({ method: 'DELETE', path: '/api/user', body, ...write });
    },
    /** POST /api/user/verify: a group token or an embed token (then with `embed`). */
    async verifyToken(token: string): Promise<VerifiedToken> {
      const { user_group, embed } = await send<VerifiedToken>({
        method: 'POST',
        path: '/api/user/verify',
        body: { token },
      });
      return embed === undefined ? { user_group } : { user_group, embed };
    },
    /**
     * POST /api/user/embed_token/revoke with the token: that one token, until its `exp`. Online verify
     * refuses it at once; offline verifiers with `revocations` on within their staleness bound.
     */
    async revokeEmbedToken(embedToken: string, write: WriteOptions = {}): Promise<RevokedEmbedTokens> {
      const { user_group, revoked } = await send<RevokedEmbedTokens>({
        method: 'POST',
        path: '/api/user/embed_token/revoke',
        body: { embed_token: embedToken },
        ...write,
      });
      return { user_group, revoked };
    },
    /** POST /api/user/embed_token/revoke with the group's id: every embed token minted for it until now. */
    async revokeUserGroupEmbedTokens(
      userGroupId: string | number,
      write: WriteOptions = {},
    ): Promise<RevokedEmbedTokens> {
      const { user_group, revoked } = await send<RevokedEmbedTokens>({
        method: 'POST',
        path: '/api/user/embed_token/revoke',
        body: { user_group_id: userGroupId },
        ...write,
      });
      return { user_group, revoked };
    },
    /**
     * RFC 7662 introspection at the API token's issuer (`workspace`, default `default`; the environment is
     * the API token's). `{active:false}` for any token not currently valid. A single-use token is consumed;
     * the Idempotency-Key (one per call, the same on each retry) makes a retry after a lost answer get the
     * first answer again.
     */
    async introspectEmbedToken(
      token: string,
      options: WriteOptions & { workspace?: string; environment?: Environment } = {},
    ): Promise<EmbedTokenIntrospection> {
      const workspace = encodeURIComponent(options.workspace ?? 'default');
      const issuer = options.environment === 'Testing' ? `/w/${workspace}/testing` : `/w/${workspace}`;
      return send<EmbedTokenIntrospection>({
        method: 'POST',
        path: `${issuer}/introspect`,
        text: { content: new URLSearchParams({ token }).toString(), mediaType: 'application/x-www-form-urlencoded' },
        idempotencyKey: options.idempotencyKey,
        bare: true,
      });
    },
    /** POST /api/user/embed_token/refresh: the token is the credential (see refreshEmbedToken). */
    refreshEmbedToken(token: string): Promise<RefreshedEmbedToken> {
      return refreshEmbedToken(token, { baseUrl: options.baseUrl, fetch: options.fetch });
    },
    async mintEmbedToken(body: MintEmbedTokenBody): Promise<MintedEmbedToken> {
      const { embed_token, expires_at, session_ends_at } = await send<MintedEmbedToken>({
        method: 'POST',
        path: '/api/user/embed_token',
        body,
      });
      return session_ends_at === undefined ? { embed_token, expires_at } : { embed_token, expires_at, session_ends_at };
    },

    async createSchema(body: CreateSchemaBody, write: WriteOptions = {}): Promise<Schema> {
      return (await send<{ schema: Schema }>({ method: 'POST', path: '/api/admin/schemas', body, ...write })).schema;
    },
    listSchemas(): Promise<Page<Schema>> {
      return page('schemas', '/api/admin/schemas');
    },
    async createDataSource(body: CreateDataSourceBody, write: WriteOptions = {}): Promise<DataSource> {
      return (
        await send<{ data_source: DataSource }>({ method: 'POST', path: '/api/admin/data_sources', body, ...write })
      ).data_source;
    },
    listDataSources(query: InEnvironment = {}): Promise<Page<DataSource>> {
      return page('data_sources', '/api/admin/data_sources', query);
    },
    async getDataSource(id: number, query: InEnvironment = {}): Promise<DataSource> {
      return (await send<{ data_source: DataSource }>({ method: 'GET', path: `/api/admin/data_sources/${id}`, query }))
        .data_source;
    },
    async updateDataSource(
      id: number,
      body: UpdateDataSourceBody,
      write: WriteOptions & InEnvironment = {},
    ): Promise<DataSource> {
      const { environment, ...rest } = write;
      return (
        await send<{ data_source: DataSource }>({
          method: 'PATCH',
          path: `/api/admin/data_sources/${id}`,
          query: { environment },
          body,
          ...rest,
        })
      ).data_source;
    },
    async deleteDataSource(id: number, write: WriteOptions & InEnvironment = {}): Promise<DataSource> {
      const { environment, ...rest } = write;
      return (
        await send<{ data_source: DataSource }>({
          method: 'DELETE',
          path: `/api/admin/data_sources/${id}`,
          query: { environment },
          ...rest,
        })
      ).data_source;
    },
    listUserGroups(query: ListUserGroupsQuery = {}): Promise<Page<UserGroup>> {
      return page('user_groups', '/api/admin/user_groups', query);
    },
    async getUserGroup(teamId: number, query: InEnvironment = {}): Promise<UserGroup> {
      return (await send<{ user_group: UserGroup }>({ method: 'GET', path: `/api/admin/user_groups/${teamId}`, query }))
        .user_group;
    },
    /**
     * POST /api/admin/user_groups/sync (docs/api.md#sync-tenants-as-code): the desired state of many groups in, the plan out;
     * applied (all or nothing) unless `dryRun`. `file` is a sync file's text, sent as it is: a JSON
     * array when it starts with `[`, NDJSON otherwise; an array of groups is sent as JSON. A refused
     * file throws a UgsError whose `line` (NDJSON) or `index` (array) names the group at fault.
     */
    async syncUserGroups(
      file: string | SyncUserGroupLine[],
      options: WriteOptions & SyncOptions & { dryRun?: boolean } = {},
    ): Promise<UserGroupSync> {
      const { dryRun, prune, environment, ...write } = options;
      return (
        await send<{ sync: UserGroupSync }>({
          method: 'POST',
          path: '/api/admin/user_groups/sync',
          query: { dry_run: dryRun ? 'true' : undefined, prune, environment },
          text: groupsFile(file),
          // An apply of 10 000 groups is one transaction that may outlast the usual 30 s; a retry
          // while it runs would be refused as in progress, so a sync waits up to 10 minutes.
          minTimeoutMs: SYNC_TIMEOUT_MS,
          ...write,
        })
      ).sync;
    },
    /**
     * POST /api/admin/user_groups/import: the lines of `ugs groups import` (an export, tokens
     * included) into the API token's environment, with the CLI's summary. `file` is sent as it is (a
     * JSON array when it starts with `[`, NDJSON otherwise); an array of lines is sent as JSON.
     * `dryRun` writes nothing; `replaceTokens` lets a line rotate its group's token to the line's.
     */
    async importUserGroups(
      file: string | ImportUserGroupLine[],
      options: WriteOptions & ImportOptions = {},
    ): Promise<UserGroupImport> {
      const { dryRun, replaceTokens, ...write } = options;
      return (
        await send<{ import: UserGroupImport }>({
          method: 'POST',
          path: '/api/admin/user_groups/import',
          query: { dry_run: dryRun ? 'true' : undefined, replace_tokens: replaceTokens ? 'true' : undefined },
          text: groupsFile(file),
          // Up to 10 000 groups written in batches: as long as a sync may take.
          minTimeoutMs: SYNC_TIMEOUT_MS,
          ...write,
        })
      ).import;
    },
    async createApiToken(body: CreateApiTokenBody, write: WriteOptions = {}): Promise<IssuedApiToken> {
      return (
        await send<{ api_token: IssuedApiToken }>({ method: 'POST', path: '/api/admin/api_tokens', body, ...write })
      ).api_token;
    },
    listApiTokens(query: InEnvironment = {}): Promise<Page<ApiToken>> {
      return page('api_tokens', '/api/admin/api_tokens', query);
    },
    async updateApiToken(id: number, body: UpdateApiTokenBody, write: WriteOptions = {}): Promise<ApiToken> {
      return (
        await send<{ api_token: ApiToken }>({ method: 'PATCH', path: `/api/admin/api_tokens/${id}`, body, ...write })
      ).api_token;
    },
    async revokeApiToken(id: number, write: WriteOptions = {}): Promise<ApiToken> {
      return (await send<{ api_token: ApiToken }>({ method: 'DELETE', path: `/api/admin/api_tokens/${id}`, ...write }))
        .api_token;
    },
    listAuditEvents(query: AuditQuery = {}): Promise<Page<AuditEvent>> {
      return page('audit_events', '/api/admin/audit_events', query);
    },
    /** GET /api/admin/usage: one group's usage per UTC day (docs/api.md#usage-per-group). */
    async getUsage(query: UsageSeriesQuery): Promise<UsageSeries> {
      const { success: _success, ...series } = await send<UsageSeries & { success: 1 }>({
        method: 'GET',
        path: '/api/admin/usage',
        query,
      });
      return series;
    },
    /** GET /api/admin/usage/top: the busiest groups of the environment (docs/api.md#usage-per-group). */
    async getTopUsage(query: TopUsageQuery = {}): Promise<TopUsage> {
      const { success: _success, ...top } = await send<TopUsage & { success: 1 }>({
        method: 'GET',
        path: '/api/admin/usage/top',
        query,
      });
      return top;
    },
    /** GET /api/admin/console_sessions: people's console sessions in the workspace, newest first, optionally one person's. */
    async listPersonSessions(query: PersonSessionsQuery = {}): Promise<PersonSession[]> {
      return (
        await send<{ console_sessions: PersonSession[] }>({ method: 'GET', path: '/api/admin/console_sessions', query })
      ).console_sessions;
    },
    /** DELETE /api/admin/console_sessions/:id: ends one person's session, from its next request. */
    async endPersonSession(id: number, write: WriteOptions = {}): Promise<void> {
      await send({ method: 'DELETE', path: `/api/admin/console_sessions/${id}`, ...write });
    },
    /** DELETE /api/admin/console_sessions: ends every session of the person; how many there were. */
    async endPersonSessions(person: { issuer: string; sub: string }, write: WriteOptions = {}): Promise<number> {
      return (
        await send<{ ended: number }>({
          method: 'DELETE',
          path: '/api/admin/console_sessions',
          query: { person_issuer: person.issuer, person_sub: person.sub },
          ...write,
        })
      ).ended;
    },
    listSigningKeys(): Promise<Page<SigningKey>> {
      return page('signing_keys', '/api/admin/signing_keys');
    },
    /** The API token's own environment's key; `force` (for a leaked key) passes the published-key bound by dropping the oldest. */
    async rotateSigningKey(options: WriteOptions & { force?: boolean } = {}): Promise<SigningKeyRotation> {
      const { force, ...write } = options;
      const { current, retired, dropped } = await send<SigningKeyRotation>({
        method: 'POST',
        path: '/api/admin/signing_keys/rotate',
        ...(force === undefined ? {} : { body: { force } }),
        ...write,
      });
      return { current, retired, dropped };
    },

    /** POST /api/admin/webhook_endpoints: the endpoint with its signing secret, which no other answer shows. */
    async createWebhookEndpoint(
      body: CreateWebhookEndpointBody,
      write: WriteOptions = {},
    ): Promise<IssuedWebhookEndpoint> {
      return (
        await send<{ webhook_endpoint: IssuedWebhookEndpoint }>({
          method: 'POST',
          path: '/api/admin/webhook_endpoints',
          body,
          ...write,
        })
      ).webhook_endpoint;
    },
    listWebhookEndpoints(query: InEnvironment = {}): Promise<Page<WebhookEndpoint>> {
      return page('webhook_endpoints', '/api/admin/webhook_endpoints', query);
    },
    async getWebhookEndpoint(id: number, query: InEnvironment = {}): Promise<WebhookEndpoint> {
      return (
        await send<{ webhook_endpoint: WebhookEndpoint }>({
          method: 'GET',
          path: `/api/admin/webhook_endpoints/${id}`,
          query,
        })
      ).webhook_endpoint;
    },
    async updateWebhookEndpoint(
      id: number,
      body: UpdateWebhookEndpointBody,
      write: WriteOptions & InEnvironment = {},
    ): Promise<WebhookEndpoint> {
      const { environment, ...rest } = write;
      return (
        await send<{ webhook_endpoint: WebhookEndpoint }>({
          method: 'PATCH',
          path: `/api/admin/webhook_endpoints/${id}`,
          query: { environment },
          body,
          ...rest,
        })
      ).webhook_endpoint;
    },
    async deleteWebhookEndpoint(id: number, write: WriteOptions & InEnvironment = {}): Promise<WebhookEndpoint> {
      const { environment, ...rest } = write;
      return (
        await send<{ webhook_endpoint: WebhookEndpoint }>({
          method: 'DELETE',
          path: `/api/admin/webhook_endpoints/${id}`,
          query: { environment },
          ...rest,
        })
      ).webhook_endpoint;
    },
    /** A new signing secret (in this answer only); the previous one keeps signing beside it for 24 hours. */
    async rotateWebhookSecret(id: number, write: WriteOptions & InEnvironment = {}): Promise<IssuedWebhookEndpoint> {
      const { environment, ...rest } = write;
      return (
        await send<{ webhook_endpoint: IssuedWebhookEndpoint }>({
          method: 'POST',
          path: `/api/admin/webhook_endpoints/${id}/rotate_secret`,
          query: { environment },
          ...rest,
        })
      ).webhook_endpoint;
    },
    listWebhookDeliveries(query: WebhookDeliveryQuery = {}): Promise<Page<WebhookDelivery>> {
      return page('webhook_deliveries', '/api/admin/webhook_deliveries', query);
    },
    async retryWebhookDelivery(id: number, write: WriteOptions & InEnvironment = {}): Promise<WebhookDelivery> {
      const { environment, ...rest } = write;
      return (
        await send<{ webhook_delivery: WebhookDelivery }>({
          method: 'POST',
          path: `/api/admin/webhook_deliveries/${id}/retry`,
          query: { environment },
          ...rest,
        })
      ).webhook_delivery;
    },

    /**
     * POST /console/session: signs the page in with an admin API token, which goes no further (the
     * service answers with the session and sets its HttpOnly cookie). For `consoleSession` clients.
     */
    async createConsoleSession(apiToken: string): Promise<ConsoleSession> {
      const answer = await send<{ session: ConsoleSession }>({
        method: 'POST',
        path: '/console/session',
        body: { api_token: apiToken },
      });
      return session(answer)!;
    },
    /** GET /console/session: the page's session, or null when it has none. */
    async getConsoleSession(): Promise<ConsoleSession | null> {
      return session(await send<{ session: ConsoleSession | null }>({ method: 'GET', path: '/console/session' }));
    },
    /**
     * DELETE /console/session: signs out; the session's cookie is refused from then on. Resolves with
     * the identity provider's logout address for a person's session, when the provider offers one.
     */
    async deleteConsoleSession(): Promise<{ logoutUrl?: string }> {
      const answer = await send<{ logout_url?: string }>({ method: 'DELETE', path: '/console/session' });
      credentials.setCsrfToken(null);
      return answer.logout_url === undefined ? {} : { logoutUrl: answer.logout_url };
    },
  };
}

export type UgsClient = ReturnType<typeof createClient>;

/** A file of groups sent as it is: a JSON array when it starts with `[`, NDJSON otherwise; an array of groups as JSON. */
function groupsFile(file: string | readonly unknown[]): { content: string; mediaType: string } {
  if (typeof file !== 'string') return { content: JSON.stringify(file), mediaType: 'application/json' };
  return { content: file, mediaType: /^\uFEFF?\s*\[/.test(file) ? 'application/json' : 'application/x-ndjson' };
}
