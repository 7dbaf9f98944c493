import { auditContextOf } from '../audit/audit-context.js';
import { createApiTokenAdmission } from './api-token-admission.js';
import { failure, type AppError } from '../errors.js';
import type { Clock } from '../clock.js';
import type { ApiTokenRecord, RateLimit } from './api-token.records.js';
import { requireScope } from './scopes.js';
import { generateApiToken, hashSecret } from '../secrets.js';
import type { Actor, Caller, Environment, Scope } from '../tenancy.js';
import type { ApiTokenStore } from './api-tokens.port.js';
import { RATE_LIMIT_BOUNDS } from '../../wire/contract.constants.js';

/** A newly made API token: the record plus its secret, which exists only in this value. */
export interface IssuedApiToken {
  record: ApiTokenRecord;
  secret: string;
}

export interface NewApiTokenInput {
  name: string;
  scope: Scope;
  /** Defaults to the caller's environment. */
  environment?: Environment;
  /** Absent or null: the server's default limit applies. */
  rateLimit?: RateLimit | null;
}

function checkRateLimit(rateLimit: RateLimit | null | undefined): void {
  if (!rateLimit) return;
  const { perSecond, burst } = RATE_LIMIT_BOUNDS;
  if (!(rateLimit.perSecond >= perSecond.minimum && rateLimit.perSecond <= perSecond.maximum)) {
    throw failure.rateLimitOutOfRange('per_second', perSecond.minimum, perSecond.maximum);
  }
  if (!(Number.isInteger(rateLimit.burst) && rateLimit.burst >= burst.minimum && rateLimit.burst <= burst.maximum)) {
    throw failure.rateLimitOutOfRange('burst', burst.minimum, burst.maximum);
  }
}

export type ApiTokenService = ReturnType<typeof createApiTokenService>;

export function createApiTokenService({ store, clock }: { store: ApiTokenStore; clock: Clock }) {
  const admission = createApiTokenAdmission({ store, clock });

  const draft = (workspaceId: number, input: NewApiTokenInput & { environment: Environment }) => {
    const secret = generateApiToken(input.environment);
    return { secret, token: { workspaceId, ...input, tokenHash: hashSecret(secret), createdAt: clock() } };
  };

  return {
    /** Steps 1 and 2 of a request's admission (src/domain/api-tokens/api-token-admission.ts). */
    authenticateApiToken: admission.authenticate,

    async createApiToken(caller: Caller, input: NewApiTokenInput): Promise<IssuedApiToken> {
      requireScope(caller, 'admin');
      checkRateLimit(input.rateLimit);
      const { secret, token } = draft(caller.tenant.workspaceId, {
        ...input,
        environment: input.environment ?? caller.tenant.environment,
      });
      return { record: await store.insertApiToken(token, auditContextOf(clock, caller)), secret };
    },

    /** The live tokens of the caller's environment (admin callers pick it with `inEnvironment`), or of the whole workspace. */
    async listApiTokens(caller: Caller, scope: 'environment' | 'workspace' = 'environment'): Promise<ApiTokenRecord[]> {
      requireScope(caller, 'admin');
      const tokens = await store.listApiTokens(caller.tenant.workspaceId);
      return scope === 'workspace' ? tokens : tokens.filter((token) => token.environment === caller.tenant.environment);
    },

    /** Sets the token's own rate limit, or with null puts it back on the server's default; from its next request on. */
    async updateApiTokenRateLimit(caller: Caller, id: number, rateLimit: RateLimit | null): Promise<ApiTokenRecord> {
      requireScope(caller, 'admin');
      checkRateLimit(rateLimit);
      const updated = await store.updateApiTokenRateLimit(
        caller.tenant.workspaceId,
        id,
        rateLimit,
        auditContextOf(clock, caller),
      );
      if (!updated) throw notFound(id);
      return updated;
    },

    async revokeApiToken(caller: Caller, id: number): Promise<ApiTokenRecord> {
      requireScope(caller, 'admin');
      const revoked = await store.revokeApiToken(caller.tenant.workspaceId, id, auditContextOf(clock, caller));
      if (!revoked) throw notFound(id);
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
      const records = await store.insertApiTokensIfWorkspaceHasNone(
        workspaceId,
        drafts.map((d) => d.token),
        auditContextOf(clock, { actor, requestId: null }),
      );
      return records && records.map((record, index) => ({ record, secret: drafts[index]!.secret }));
    },
  };
}

function notFound(id: number): AppError {
  return failure.apiTokenNotFound(id);
}
