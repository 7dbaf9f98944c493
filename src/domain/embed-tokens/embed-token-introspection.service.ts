import { decodeJwt } from 'jose';
import type { Clock } from '../clock.js';
import { failure, isAppError } from '../errors.js';
import { assertIdempotencyKey } from '../idempotency/idempotency.service.js';
import { hashSecret } from '../secrets.js';
import { ENVIRONMENTS, type Caller, type Environment } from '../tenancy.js';
import type { WorkspaceStore } from '../workspaces/workspaces.port.js';
import type { EmbedTokenConsumptionStore } from './embed-token-consumption.port.js';
import { assertRefreshOrigin, assertRefreshable, refreshedLifetime } from './embed-token-sessions.rules.js';
import {
  isEmbedTokenShaped,
  type EmbedTokenClaims,
  type EmbedTokenService,
  type UgsClaim,
  type VerifiedEmbed,
} from './embed-tokens.service.js';

/** RFC 7662's `token_type` of an embed token: the `typ` of its header. */
export const EMBED_TOKEN_TYPE_NAME = 'ugs-embed+jwt';

/** RFC 7662 §2.2: the answer for anything that is not a currently valid token, whatever the reason. */
export const INACTIVE = { active: false } as const;

/** RFC 7662 §2.2's members of a valid token, and the service's own claim (`ugs`). */
export interface ActiveIntrospection extends EmbedTokenClaims {
  active: true;
  token_type: typeof EMBED_TOKEN_TYPE_NAME;
}
export type Introspection = typeof INACTIVE | ActiveIntrospection;

export interface RefreshedEmbedToken {
  embedToken: string;
  expiresAt: string;
  sessionEndsAt: string;
  /** The origin the token is pinned to: the only one a browser's page may read the answer from. */
  origin: string | null;
}

/** An issuer, as its path names it: /w/<workspace>[/testing]. */
export interface Issuer {
  workspace: string;
  environment: Environment;
}

/** Takes one request from a session's rate-limit bucket; throws `rate_limited` when it is empty. */
export type SessionAdmission = (sessionId: string) => Promise<void>;

export interface EmbedTokenLifecycleDeps {
  embedTokens: Pick<EmbedTokenService, 'verify' | 'mint'>;
  store: EmbedTokenConsumptionStore & Pick<WorkspaceStore, 'findWorkspaceByName'>;
  clock: Clock;
}

export type EmbedTokenLifecycleService = ReturnType<typeof createEmbedTokenLifecycleService>;

// Consumed tokens leave once expired; purged from the consuming path, as idempotency keys are from theirs.
const PURGE_INTERVAL_MS = 60_000;
const PURGE_BATCH = 1000;

const isoAt = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The online lifecycle of embed tokens beyond minting (docs/api.md#introspection-rfc-7662 and the two sections after it): RFC 7662 introspection, the
 * consumption of single-use tokens, and refresh within a session. Each builds on the online verify
 * (EmbedTokenService.verify), so whatever verify refuses (expiry, rotation, deletion, revocation) they
 * refuse too.
 */
export function createEmbedTokenLifecycleService({ embedTokens, store, clock }: EmbedTokenLifecycleDeps) {
  let nextPurgeAt = 0;
  const workspaceIds = new Map<string, number>();
  const counts = { consumed: 0, consumptionsRefused: 0, refreshed: 0, active: 0, inactive: 0 };

  async function purgeExpired(): Promise<void> {
    const now = Date.parse(clock());
    if (now < nextPurgeAt) return;
    nextPurgeAt = now + PURGE_INTERVAL_MS;
    const purged = await store.purgeConsumedEmbedTokens(new Date(now).toISOString(), PURGE_BATCH);
    if (purged === PURGE_BATCH) nextPurgeAt = now;
  }

  /**
   * Consumes a single-use token (true for any other): the first consumption wins, on any instance.
   * A later one is refused, unless it is the same API token retrying with the same Idempotency-Key,
   * which is answered as its first try was, so that a lost answer costs the caller nothing.
   */
  async function consumedFirst(caller: Caller, claims: EmbedTokenClaims, idempotencyKey?: string): Promise<boolean> {
    // Only a single-use token reads the key: for any other, as for verify before, the header is ignored.
    if (claims.ugs.single_use !== true) return true;
    if (idempotencyKey !== undefined) assertIdempotencyKey(idempotencyKey);
    const consumer =
      idempotencyKey === undefined || caller.actor.type !== 'api_token'
        ? null
        : hashSecret(`${caller.actor.apiTokenId}:${idempotencyKey}`);
    await purgeExpired();
    const result = await store.consumeEmbedToken({
      workspaceId: caller.tenant.workspaceId,
      jti: claims.jti,
      consumer,
      consumedAt: clock(),
      expiresAt: isoAt(claims.exp),
    });
    const first = result.consumed || (consumer !== null && result.consumer === consumer);
    if (result.consumed) counts.consumed++;
    else if (!first) counts.consumptionsRefused++;
    return first;
  }

  /** Verify, with `user_group_not_found` for any token not currently valid: null then. */
  async function verifiedOrNull(caller: Caller, token: string): Promise<VerifiedEmbed | null> {
    try {
      return await embedTokens.verify(caller, token);
    } catch (error) {
      if (isAppError(error) && error.code === 'user_group_not_found') return null;
      throw error;
    }
  }

  return {
    /** Figures for /metrics. */
    counts: () => ({ ...counts }),

    /**
     * The online verify of POST /api/user/verify for an embed token: EmbedTokenService.verify, and a
     * single-use token consumed (a consumed one is `user_group_not_found`, as an unknown one is).
     */
    async verify(caller: Caller, token: string, idempotencyKey?: string): Promise<VerifiedEmbed> {
      const verified = await embedTokens.verify(caller, token);
      if (!(await consumedFirst(caller, verified.claims, idempotencyKey))) throw failure.userGroupNotFound();
      return verified;
    },

    /**
     * RFC 7662 introspection at the caller's issuer: inactive for anything not currently valid there
     * (expired, not yet valid, revoked, consumed, forged, another issuer's), else the token's claims.
     */
    async introspect(caller: Caller, issuer: Issuer, token: string, idempotencyKey?: string): Promise<Introspection> {
      await assertCallerOf(caller, issuer);
      if (!isEmbedTokenShaped(token)) {
        counts.inactive++;
        return INACTIVE;
      }
      const verified = await verifiedOrNull(caller, token);
      if (!verified || !(await consumedFirst(caller, verified.claims, idempotencyKey))) {
        counts.inactive++;
        return INACTIVE;
      }
      counts.active++;
      const { iss, sub, aud, iat, nbf, exp, jti, ugs } = verified.claims;
      return { active: true, token_type: EMBED_TOKEN_TYPE_NAME, iss, sub, aud, iat, nbf, exp, jti, ugs };
    },

    /**
     * A fresh token for a live token of a session, no API token involved: the token is the credential.
     * Same group, embed, origin and per-view values; the group's values and rules as they are now; a new
     * `exp` within the session. `origin` is the request's Origin header (undefined without one).
     */
    async refresh(token: string, origin: string | undefined, admit: SessionAdmission): Promise<RefreshedEmbedToken> {
      const caller = issuerCaller(await issuerTenant(token));
      const verified = await verifiedOrNull(caller, token);
      if (!verified) throw failure.invalidEmbedToken();
      const { claims } = verified;
      assertRefreshOrigin(claims.ugs.origin, origin);
      const session = assertRefreshable(
        { iat: claims.iat, exp: claims.exp, session: claims.ugs.session },
        Math.floor(Date.parse(clock()) / 1000),
      );
      await admit(session.id);
      let minted;
      try {
        minted = await embedTokens.mint(caller, {
          userGroupId: verified.userGroup.providedId,
          expiresIn: refreshedLifetime(claims),
          embedId: verified.embed.embedId ?? undefined,
          origin: claims.ugs.origin ?? undefined,
          renewal: { session, properties: claims.ugs.properties, teamId: claims.ugs.team_id, jti: claims.jti },
        });
      } catch (error) {
        // The group went or its token was rotated since the verify: the session ends with it.
        if (isAppError(error) && error.code === 'user_group_not_found') throw failure.invalidEmbedToken();
        throw error;
      }
      counts.refreshed++;
      return {
        embedToken: minted.embedToken,
        expiresAt: minted.expiresAt,
        sessionEndsAt: minted.sessionEndsAt ?? isoAt(session.ends_at),
        origin: claims.ugs.origin,
      };
    },
  };

  /** Introspection at an issuer takes an API token of that issuer: its workspace and environment. */
  async function assertCallerOf(caller: Caller, issuer: Issuer): Promise<void> {
    if (caller.tenant.environment === issuer.environment) {
      let workspaceId = workspaceIds.get(issuer.workspace);
      if (workspaceId === undefined) {
        workspaceId = (await store.findWorkspaceByName(issuer.workspace))?.id;
        // A workspace's name never changes: its id is kept once a caller of its own asked.
        if (workspaceId === caller.tenant.workspaceId) workspaceIds.set(issuer.workspace, workspaceId);
      }
      if (workspaceId === caller.tenant.workspaceId) return;
    }
    throw failure.introspectionIssuer();
  }

  /**
   * The issuer a token names (its `ugs` workspace and environment), read before its signature is
   * checked: only to pick the keys that check it, so a forged name leads to a refusal and nothing else.
   */
  async function issuerTenant(token: string): Promise<{ workspaceId: number; environment: Environment }> {
    if (!isEmbedTokenShaped(token)) throw failure.invalidEmbedToken();
    let ugs: Partial<UgsClaim> | undefined;
    try {
      ugs = decodeJwt(token).ugs as Partial<UgsClaim> | undefined;
    } catch {
      ugs = undefined;
    }
    const environment = ENVIRONMENTS.find((name) => name === ugs?.environment);
    const workspace = typeof ugs?.workspace === 'string' ? await store.findWorkspaceByName(ugs.workspace) : null;
    if (!workspace || !environment) throw failure.invalidEmbedToken();
    return { workspaceId: workspace.id, environment };
  }
}

/**
 * The caller a refresh acts as: the token's own issuer. It presents no API token, so nothing admits
 * it but the session's rate limit, and it writes nothing an actor would be recorded on (the issuer's
 * signing key exists: it signed the token). `read` is the least scope, and all that minting needs.
 */
function issuerCaller(tenant: { workspaceId: number; environment: Environment }): Caller {
  return { tenant, scope: 'read', actor: { type: 'cli' }, requestId: null };
}
