import { auditContextOf } from './audit-context.js';
import { AppError } from './errors.js';
import type { Clock } from './clock.js';
import type { ApiTokenRecord } from './models.js';
import { requireScope } from './scopes.js';
import { generateApiToken, hashSecret } from './secrets.js';
import type { Actor, Caller, Environment, Scope } from './tenancy.js';
import type { ApiTokenStore } from '../store/store.js';

/** A newly made API token: the record plus its secret, which exists only in this value. */
export interface IssuedApiToken {
  record: ApiTokenRecord;
  secret: string;
}

export interface NewApiTokenInput {
  name: string;
  scope: Scope;
  environment: Environment;
}

const API_TOKEN_SHAPE = /^ugs_(live|test)_[0-9a-f]{64}$/;
// last_used_at is for operators, not an exact counter: one write a minute per token keeps the
// hot path free of writes.
const LAST_USED_RESOLUTION_MS = 60_000;

export type ApiTokenService = ReturnType<typeof createApiTokenService>;

export function createApiTokenService({ store, clock }: { store: ApiTokenStore; clock: Clock }) {

  const draft = (workspaceId: number, input: NewApiTokenInput) => {
    const secret = generateApiToken(input.environment);
    return { secret, token: { workspaceId, ...input, tokenHash: hashSecret(secret), createdAt: clock() } };
  };

  return {
    /** Resolves a presented API token to the caller it speaks for; the request id is filled in later. */
    async authenticateApiToken(secret: string, requestId: string | null): Promise<Caller> {
      const record = API_TOKEN_SHAPE.test(secret) ? await store.findApiTokenByHash(hashSecret(secret)) : null;
      if (!record) throw new AppError('invalid_api_token', 'The API token is unknown or revoked.', { headers: { 'WWW-Authenticate': 'Token' } });
      const now = clock();
      if (record.lastUsedAt === null || Date.parse(now) - Date.parse(record.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
        // Bookkeeping must never fail or delay a request (a busy database would do both): not awaited,
        // and a failure only means the next request tries again.
        store.recordApiTokenUse(record.id, now).catch(() => undefined);
      }
      return {
        tenant: { workspaceId: record.workspaceId, environment: record.environment },
        scope: record.scope,
        actor: { type: 'api_token', apiTokenId: record.id, name: record.name },
        requestId,
      };
    },

    async createApiToken(caller: Caller, input: NewApiTokenInput): Promise<IssuedApiToken> {
      requireScope(caller, 'admin');
      const { secret, token } = draft(caller.tenant.workspaceId, input);
      return { record: await store.insertApiToken(token, auditContextOf(clock, caller)), secret };
    },

    /** The live tokens of the caller's environment (admin callers pick it with `inEnvironment`), or of the whole workspace. */
    async listApiTokens(caller: Caller, scope: 'environment' | 'workspace' = 'environment'): Promise<ApiTokenRecord[]> {
      requireScope(caller, 'admin');
      const tokens = await store.listApiTokens(caller.tenant.workspaceId);
      return scope === 'workspace' ? tokens : tokens.filter((token) => token.environment === caller.tenant.environment);
    },

    async revokeApiToken(caller: Caller, id: number): Promise<ApiTokenRecord> {
      requireScope(caller, 'admin');
      const revoked = await store.revokeApiToken(caller.tenant.workspaceId, id, auditContextOf(clock, caller));
      if (!revoked) throw new AppError('api_token_not_found', `No live API token with id ${id} in this workspace.`);
      return revoked;
    },

    /**
     * On a workspace's first start: one admin token per environment, or null when the workspace
     * already has tokens (so concurrent first starts print one set between them).
     */
    async issueFirstStartTokens(workspaceId: number, actor: Actor): Promise<IssuedApiToken[] | null> {
      const drafts = (['Customer', 'Testing'] as const).map((environment) =>
        draft(workspaceId, { name: `first-start admin (${environment})`, scope: 'admin', environment }),
      );
      const records = await store.insertApiTokensIfWorkspaceHasNone(workspaceId, drafts.map((d) => d.token), auditContextOf(clock, { actor, requestId: null }));
      return records && records.map((record, index) => ({ record, secret: drafts[index]!.secret }));
    },
  };
}
