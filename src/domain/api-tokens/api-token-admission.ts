import { LRUCache } from 'lru-cache';
import type { ApiTokenCheck, ApiTokenState } from './api-token-check.js';
import { failure } from '../errors.js';
import type { Clock } from '../clock.js';
import type { ApiTokenRecord, RateLimit } from './api-token.records.js';
import { hashSecret } from '../secrets.js';
import type { Actor, Caller } from '../tenancy.js';
import type { ApiTokenStore } from './api-tokens.port.js';

/**
 * The admission of a request that presents an API token, in one place (docs/architecture.md, "Token
 * admission"). In order:
 *
 * 1. shape: anything that is not `ugs_(live|test)_<64 hex>` is `invalid_api_token`, unread;
 * 2. lookup: the token is read by the SHA-256 of its secret, unless the route's operation confirms it
 *    in its own first statement (the hot reads) and this process has seen it live: then it is
 *    remembered, and the caller carries an unsettled `ApiTokenCheck`; unknown → `invalid_api_token`;
 * 3. remembered check: the operation's lookup (batched per event-loop turn, src/store/hot-reads.ts)
 *    reads the token's state beside the group, in the same snapshot, and settles the check:
 *    revoked or gone → `invalid_api_token`; a request that ends before any lookup settles it by a
 *    read of its own when it is admitted;
 * 4. scope and environment: the operation's own (`requireScope`, `inEnvironment`);
 * 5. rate limit: the request is admitted, its token taken from the bucket (`rate_limited` when it is
 *    empty): at once for a token read in step 2; for a remembered one before any work that the
 *    operation counts, signs or writes — by the admitting group reads right after their lookup
 *    (`admitWithLookup`), by `admittedOnEntry` for an operation whose work comes before any read, or
 *    before a refusal is sent (`admissionFailureBeforeRefusal`) — whichever comes first, and once;
 * 6. the operation: usage counted, signatures checked or made, writes, only for an admitted request.
 *
 * HTTP keeps only the header's parsing, the bucket (the admission it hands in) and the statuses; the
 * store only the batched read.
 */

/** Who an API token speaks for, with that token's own rate limit (null: the server's default). */
export interface ApiTokenCaller extends Caller {
  actor: Extract<Actor, { type: 'api_token' }>;
  rateLimit: RateLimit | null;
}

/** Takes one token from the caller's rate-limit bucket; throws `rate_limited` when it is empty (step 5). */
export type RateLimitAdmission = (caller: ApiTokenCaller) => Promise<void>;

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

/** Whether the caller's admission waits for its operation's lookup (step 3) rather than happening now. */
export function admissionDeferred(caller: Caller): boolean {
  return caller.tokenCheck !== undefined;
}

/** Step 3, for a lookup: the API token it must read beside its group (an unsettled check's), or none. */
export function tokenToConfirm(check: ApiTokenCheck | undefined): { id: number; hash: string } | undefined {
  return check !== undefined && !check.settled ? { id: check.apiTokenId, hash: check.apiTokenHash } : undefined;
}

/**
 * Steps 3 and 5 for the admitting group reads (src/store/hot-reads.ts): settles the check with what
 * the lookup read when it confirmed the token (`confirmed`), then admits the request, before the read
 * returns; throws `invalid_api_token` for a token no longer live, `rate_limited` for an empty bucket.
 */
export async function admitWithLookup(
  check: ApiTokenCheck,
  confirmed: ApiTokenState | null | undefined,
): Promise<void> {
  if (confirmed !== undefined) check.settle(confirmed);
  await check.admit();
}

/** An operation whose first argument is its caller. */
type CallerOperation = (caller: Caller, ...rest: never[]) => Promise<unknown>;

/**
 * Step 5 on entry, for the operations of a service whose work (a signature checked, a use counted)
 * comes before any admitting group read: a remembered token is admitted (read and rate-limited) before
 * the operation starts, so a refused request checks no signature and is never counted. A no-op for a
 * request admitted on arrival. Applied where the services are put together (src/domain/services.ts):
 * the operations themselves never call admission.
 */
export function admittedOnEntry<S extends { [P in K]: CallerOperation }, K extends keyof S>(
  service: S,
  operations: readonly K[],
): S {
  const admitted = { ...service };
  for (const name of operations) {
    const operation = service[name];
    admitted[name] = (async (caller: Caller, ...rest: never[]) => {
      await caller.tokenCheck?.admit();
      return operation(caller, ...rest);
    }) as S[K];
  }
  return admitted;
}

/**
 * Step 5 before a refusal is sent: a remembered token not yet admitted is admitted now, so a token
 * revoked meanwhile answers `invalid_api_token` and an empty bucket `rate_limited`, whatever else went
 * wrong. Returns the admission's own failure, which replaces the refusal, or undefined.
 */
export async function admissionFailureBeforeRefusal(caller: Caller | undefined): Promise<unknown> {
  const check = caller?.tokenCheck;
  if (!check || check.admitted) return undefined;
  try {
    await check.admit();
    return undefined;
  } catch (error) {
    return error;
  }
}

// last_used_at is for operators, not an exact counter: one write a minute per token keeps the
// hot path free of writes.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Live tokens one process remembers for the hot reads; misses are not kept, so unknown tokens cannot fill it. */
const REMEMBERED_TOKENS = 10_000;

/**
 * The clock's reading from which a use of the token is written again: `lastUsedAt` plus the
 * resolution, as the clock writes times (ISO 8601 in UTC to the millisecond, whose order is the
 * text's). Worked out once per write, so that a request compares two strings instead of parsing two
 * timestamps (docs/performance-history.md). Null: the token was never used, so its first use is written.
 */
function nextUseWriteAt(lastUsedAt: string | null): string | null {
  if (lastUsedAt === null) return null;
  const lastMs = Date.parse(lastUsedAt);
  // Unreadable (never written by the clock): never due, as the subtraction it replaces was never true.
  return Number.isNaN(lastMs) ? '\uffff' : new Date(lastMs + LAST_USED_RESOLUTION_MS).toISOString();
}

/** A remembered live token, with when its next use is written. */
interface RememberedToken {
  record: ApiTokenRecord;
  useWrittenFrom: string | null;
}

const rememberedToken = (record: ApiTokenRecord): RememberedToken => ({
  record,
  useWrittenFrom: nextUseWriteAt(record.lastUsedAt),
});

/** What a remembered token's check needs of its admission: the store, and the memory to correct. */
interface TokenMemory {
  store: Pick<ApiTokenStore, 'findApiTokenByHash'>;
  /** A statement read the token's state: a live token's rate limit is remembered as read, a dead one forgotten. */
  settled(hash: string, state: ApiTokenState | null): void;
}

/**
 * The check a remembered token's caller carries (step 3, then step 5). A class rather than an object
 * literal with accessors and closures: every hot read makes one, and a literal with getters cost
 * more than a microsecond to build (docs/performance-history.md).
 */
class RememberedTokenCheck implements ApiTokenCheck {
  readonly apiTokenId: number;
  #live: boolean | undefined = undefined;
  #admitted = false;

  constructor(
    readonly apiTokenHash: string,
    private readonly caller: ApiTokenCaller,
    private readonly admitCaller: RateLimitAdmission,
    private readonly memory: TokenMemory,
  ) {
    this.apiTokenId = caller.actor.apiTokenId;
  }

  get settled(): boolean {
    return this.#live !== undefined;
  }

  get admitted(): boolean {
    return this.#admitted;
  }

  settle(state: ApiTokenState | null): void {
    if (this.#live === undefined) {
      this.#live = state?.live === true;
      if (state && this.#live) this.caller.rateLimit = state.rateLimit;
      this.memory.settled(this.apiTokenHash, state);
    }
    if (!this.#live) throw failure.invalidApiToken();
  }

  async admit(): Promise<void> {
    if (this.#admitted) return;
    if (this.#live === undefined) {
      // Nothing read the token's state: read it now (a refusal before the statement, say).
      const record = await this.memory.store.findApiTokenByHash(this.apiTokenHash);
      this.settle(record && { live: true, rateLimit: record.rateLimit });
    } else if (!this.#live) {
      throw failure.invalidApiToken();
    }
    this.#admitted = true;
    await this.admitCaller(this.caller);
  }
}

export type ApiTokenAdmission = ReturnType<typeof createApiTokenAdmission>;

/** Steps 1–3 and the check that carries step 5 for a remembered token; the process's memory of live tokens. */
export function createApiTokenAdmission({
  store,
  clock,
}: {
  store: Pick<ApiTokenStore, 'findApiTokenByHash' | 'recordApiTokenUse'>;
  clock: Clock;
}) {
  // Live tokens this process has read, by hash: taken only where a statement confirms them (authenticate).
  const remembered = new LRUCache<string, RememberedToken>({ max: REMEMBERED_TOKENS });
  const memory: TokenMemory = {
    store,
    settled(hash, state) {
      if (state && state.live) {
        const known = remembered.get(hash);
        if (known) remembered.set(hash, { ...known, record: { ...known.record, rateLimit: state.rateLimit } });
      } else {
        remembered.delete(hash);
      }
    },
  };

  return {
    /**
     * Resolves a presented API token to the caller it speaks for (steps 1 and 2). With `deferred` (an
     * operation whose first statement can confirm the token), a token this process has seen live is
     * not read again: the caller carries a check that the statement settles, and `deferred.admit` (the
     * rate limit) runs once it has.
     */
    async authenticate(
      secret: string,
      requestId: string | null,
      deferred?: { admit: RateLimitAdmission },
    ): Promise<ApiTokenCaller> {
      if (!isApiTokenShaped(secret)) throw failure.invalidApiToken();
      const hash = hashSecret(secret);
      const known = deferred ? remembered.get(hash) : undefined;
      let token = known;
      if (token === undefined) {
        const read = await store.findApiTokenByHash(hash);
        if (!read) throw failure.invalidApiToken();
        token = rememberedToken(read);
      }
      const { record } = token;
      const now = clock();
      if (token.useWrittenFrom === null || now >= token.useWrittenFrom) {
        // Bookkeeping must never fail or delay a request (a busy database would do both): not awaited,
        // and a failure only means the next request tries again.
        store.recordApiTokenUse(record.id, now).catch(() => undefined);
        remembered.set(hash, rememberedToken({ ...record, lastUsedAt: now }));
      } else if (!known) {
        remembered.set(hash, token);
      }
      const caller = apiTokenCaller(record, requestId);
      if (known && deferred) caller.tokenCheck = new RememberedTokenCheck(hash, caller, deferred.admit, memory);
      return caller;
    },
  };
}
