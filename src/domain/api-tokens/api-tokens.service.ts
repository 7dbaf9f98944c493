import { auditContextOf } from '../audit/audit-context.js';
import { LRUCache } from 'lru-cache';
import type { ApiTokenCheck } from './api-token-check.js';
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

/** Who an API token speaks for, with that token's own rate limit (null: the server's default). */
export interface ApiTokenCaller extends Caller {
  actor: Extract<Actor, { type: 'api_token' }>;
  rateLimit: RateLimit | null;
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

const API_TOKEN_SHAPE = /^ugs_(live|test)_[0-9a-f]{64}$/;

/** Whether a string could be an API token at all; anything else is unknown without a lookup. */
export function isApiTokenShaped(secret: string): boolean {
  return API_TOKEN_SHAPE.test(secret);
}

/** The caller a live API token speaks for, whether it came in a header or through a console session. */
export function apiTokenCaller(record: ApiTokenRecord, requestId: string | null): ApiTokenCaller {
  return {
    tenant: { workspaceId: record.workspaceId, environment: record.environment },
    scope: record.scope,
    actor: { type: 'api_token', apiTokenId: record.id, name: record.name },
    requestId,
    rateLimit: record.rateLimit,
  };
}
// last_used_at is for operators, not an exact counter: one write a minute per token keeps the
// hot path free of writes.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Live tokens one process remembers for the hot reads; misses are not kept, so unknown tokens cannot fill it. */
const REMEMBERED_TOKENS = 10_000;

export type ApiTokenService = ReturnType<typeof createApiTokenService>;

export function createApiTokenService({ store, clock }: { store: ApiTokenStore; clock: Clock }) {
  // Live tokens this process has read, by hash: taken only where a statement confirms them (authenticateApiToken).
  const remembered = new LRUCache<string, ApiTokenRecord>({ max: REMEMBERED_TOKENS });

  function deferredCheck(
    hash: string,
    caller: ApiTokenCaller,
    admit: (caller: ApiTokenCaller) => Promise<void>,
  ): ApiTokenCheck {
    let live: boolean | undefined;
    let admitted = false;
    const check: ApiTokenCheck = {
      apiTokenId: caller.actor.apiTokenId,
      apiTokenHash: hash,
      get settled() {
        return live !== undefined;
      },
      get admitted() {
        return admitted;
      },
      settle(state) {
        if (live === undefined) {
          live = state?.live === true;
          if (state && live) {
            caller.rateLimit = state.rateLimit;
            const record = remembered.get(hash);
            if (record) remembered.set(hash, { ...record, rateLimit: state.rateLimit });
          } else {
            remembered.delete(hash);
          }
        }
        if (!live) throw failure.invalidApiToken();
      },
      async admit() {
        if (admitted) return;
        if (live === undefined) {
          // Nothing read the token's state: read it now (a refusal before the statement, say).
          const record = await store.findApiTokenByHash(hash);
          check.settle(record && { live: true, rateLimit: record.rateLimit });
        } else if (!live) {
          throw failure.invalidApiToken();
        }
        admitted = true;
        await admit(caller);
      },
    };
    return check;
  }

  const draft = (workspaceId: number, input: NewApiTokenInput & { environment: Environment }) => {
    const secret = generateApiToken(input.environment);
    return { secret, token: { workspaceId, ...input, tokenHash: hashSecret(secret), createdAt: clock() } };
  };

  return {
    /**
     * Resolves a presented API token to the caller it speaks for. With `deferred` (an operation whose
     * first statement can confirm the token), a token this process has seen live is not read again:
     * the caller carries a check that the statement settles, and `deferred.admit` (the rate limit) runs
     * once it has (src/domain/api-tokens/api-token-check.ts).
     */
    async authenticateApiToken(
      secret: string,
      requestId: string | null,
      deferred?: { admit: (caller: ApiTokenCaller) => Promise<void> },
    ): Promise<ApiTokenCaller> {
      if (!isApiTokenShaped(secret)) throw failure.invalidApiToken();
      const hash = hashSecret(secret);
      const known = deferred ? remembered.get(hash) : undefined;
      const record = known ?? (await store.findApiTokenByHash(hash));
      if (!record) throw failure.invalidApiToken();
      const now = clock();
      if (record.lastUsedAt === null || Date.parse(now) - Date.parse(record.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
        // Bookkeeping must never fail or delay a request (a busy database would do both): not awaited,
        // and a failure only means the next request tries again.
        store.recordApiTokenUse(record.id, now).catch(() => undefined);
        remembered.set(hash, { ...record, lastUsedAt: now });
      } else if (!known) {
        remembered.set(hash, record);
      }
      const caller = apiTokenCaller(record, requestId);
      if (known && deferred) caller.tokenCheck = deferredCheck(hash, caller, deferred.admit);
      return caller;
    },

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
