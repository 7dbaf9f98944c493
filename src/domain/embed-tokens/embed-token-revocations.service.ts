import { createHash } from 'node:crypto';
import { requireScope } from '../api-tokens/scopes.js';
import { auditContextOf } from '../audit/audit-context.js';
import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import type { Caller, Environment, Tenant } from '../tenancy.js';
import type { UserGroupView, UserGroupViewer } from '../user-groups/user-group.view.js';
import { providedIdOf } from '../user-groups/user-groups.service.js';
import type { UserGroupStore } from '../user-groups/user-groups.port.js';
import type { WorkspaceStore } from '../workspaces/workspaces.port.js';
import { EMBED_REVOCATION_MAX_AGE_S } from '../../wire/contract.constants.js';
import type { EmbedTokenRevocationStore } from './embed-token-revocations.port.js';
import { issuerRevocationKey, revocationDocument, revocationGroupName } from './embed-token-revocations.rules.js';
import type { EmbedTokenService } from './embed-tokens.service.js';

/** Group names remembered per issuer for minting; the map is emptied when full. */
const MAX_KNOWN_NAMES = 100_000;
/** How often at most this process deletes entries out of force (each read filters them anyway). */
const PRUNE_EVERY_MS = 60_000;

/**
 * How groups are named in revocation documents and in their tokens' `grp` claim: a keyed hash of the
 * team_id under the issuer's key, which derives from the database's random key (read once per process;
 * it never changes). Shared by minting and publishing, so both name a group alike on every instance.
 */
export function createRevocationNames(store: Pick<EmbedTokenRevocationStore, 'embedRevocationSecret'>) {
  let secret: Promise<string> | undefined;
  const issuerKeys = new Map<string, Buffer>();
  async function issuerKey(tenant: Tenant): Promise<Buffer> {
    const id = `${tenant.workspaceId}:${tenant.environment}`;
    let key = issuerKeys.get(id);
    if (key === undefined) {
      secret ??= store.embedRevocationSecret().catch((error: unknown) => {
        secret = undefined; // a failed read is asked again next time
        throw error;
      });
      key = issuerRevocationKey(await secret, tenant);
      issuerKeys.set(id, key);
    }
    return key;
  }
  /** Names already computed, by issuer then team: a mint of a known group costs a lookup, not an HMAC. */
  const known = new Map<string, Map<number, string>>();
  /** The group's name: at once when known, else once the key is read (the first time per process). */
  function groupName(tenant: Tenant, teamId: number): string | Promise<string> {
    const id = `${tenant.workspaceId}:${tenant.environment}`;
    const name = known.get(id)?.get(teamId);
    if (name !== undefined) return name;
    const key = issuerKeys.get(id);
    if (key === undefined) return issuerKey(tenant).then(() => groupName(tenant, teamId));
    let names = known.get(id);
    if (names === undefined) known.set(id, (names = new Map()));
    if (names.size >= MAX_KNOWN_NAMES) names.clear();
    const computed = revocationGroupName(key, teamId);
    names.set(teamId, computed);
    return computed;
  }
  return {
    groupName,
    /** The issuer's naming, for many groups at once (a document) without a wait per group. */
    async namer(tenant: Tenant): Promise<(teamId: number) => string> {
      const key = await issuerKey(tenant);
      return (teamId) => revocationGroupName(key, teamId);
    },
  };
}
export type RevocationNames = ReturnType<typeof createRevocationNames>;

export interface EmbedTokenRevocationServiceDeps {
  store: EmbedTokenRevocationStore &
    Pick<UserGroupStore, 'findUserGroupByProvidedId'> &
    Pick<WorkspaceStore, 'findWorkspaceByName'>;
  embedTokens: Pick<EmbedTokenService, 'issuerOf' | 'ownedClaims'>;
  names: RevocationNames;
  view: UserGroupViewer;
  clock: Clock;
}

export interface PublishedRevocations {
  etag: string;
  body: string;
  maxAgeS: number;
}

export interface RevokedEmbedTokens {
  userGroup: UserGroupView;
  /** The token revoked, or null when every current token of the group was. */
  jti: string | null;
}

export type EmbedTokenRevocationService = ReturnType<typeof createEmbedTokenRevocationService>;

/**
 * Revocation of embed tokens that reaches offline verifiers (docs/api.md, "Revoking embed tokens"):
 * the explicit revokes, and each issuer's published document. Online verify honours the same entries
 * (embed-tokens.service.ts): a group's by its token generation, a single token's by its `jti`.
 */
export function createEmbedTokenRevocationService({
  store,
  embedTokens,
  names,
  view,
  clock,
}: EmbedTokenRevocationServiceDeps) {
  /** The last document rendered per issuer, served again while its entries are unchanged. */
  const rendered = new Map<string, { version: string; published: PublishedRevocations }>();
  let prunedAt = 0;
  /** For /metrics: documents rendered, served again from memory, answered 304; explicit revokes. */
  const counted = { rendered: 0, cached: 0, notModified: 0, tokens: 0, groups: 0 };
  const nowS = () => Math.floor(Date.parse(clock()) / 1000);

  async function pruneNowAndThen(now: number): Promise<void> {
    if (Date.now() - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = Date.now();
    await store.pruneEmbedTokenRevocations(now);
  }

  return {
    counts: () => ({ ...counted }),

    /** Counts a conditional request answered 304 (the route decides, from the ETag). */
    notModified(): void {
      counted.notModified += 1;
    },

    /**
     * The revocation document of an issuer. A workspace that does not exist answers as one with
     * nothing revoked, as its JWKS answers as one without keys.
     */
    async published(workspaceName: string, environment: Environment): Promise<PublishedRevocations> {
      const issuer = embedTokens.issuerOf(workspaceName, environment);
      const workspace = await store.findWorkspaceByName(workspaceName);
      const now = nowS();
      if (!workspace) {
        const body = revocationDocument(
          issuer,
          EMBED_REVOCATION_MAX_AGE_S,
          { generation: 0, groups: [], tokens: [] },
          String,
        );
        return { etag: etagOf(`none:${issuer}`), body, maxAgeS: EMBED_REVOCATION_MAX_AGE_S };
      }
      const tenant = { workspaceId: workspace.id, environment };
      await pruneNowAndThen(now);
      const key = `${workspace.id}:${environment}`;
      const version = await store.embedTokenRevocationsVersion(tenant, now);
      const known = rendered.get(key);
      if (known && known.version === version) {
        counted.cached += 1;
        return known.published;
      }
      counted.rendered += 1;
      const list = await store.listEmbedTokenRevocations(tenant, now);
      const body = revocationDocument(issuer, EMBED_REVOCATION_MAX_AGE_S, list, await names.namer(tenant));
      const published = { etag: etagOf(`${issuer}:${version}`), body, maxAgeS: EMBED_REVOCATION_MAX_AGE_S };
      rendered.set(key, { version, published });
      return published;
    },

    /** Revokes one embed token of the caller's environment, given the token (its signature proves whose it is). */
    async revokeToken(caller: Caller, token: string): Promise<RevokedEmbedTokens> {
      requireScope(caller, 'write');
      const claims = await embedTokens.ownedClaims(caller, token);
      if (!claims) throw failure.userGroupNotFound();
      const revoked = await store.revokeEmbedToken(
        { tenant: caller.tenant, teamId: claims.teamId, jti: claims.jti, expiresAt: claims.exp },
        auditContextOf(clock, caller),
      );
      if (!revoked) throw failure.userGroupNotFound();
      counted.tokens += 1;
      return { userGroup: view(revoked), jti: claims.jti };
    },

    /** Revokes every embed token minted for the group until now (its token generation rises). */
    async revokeGroup(caller: Caller, userGroupId: string | number): Promise<RevokedEmbedTokens> {
      requireScope(caller, 'write');
      const group = await store.findUserGroupByProvidedId(caller.tenant, providedIdOf(userGroupId));
      if (!group) throw failure.userGroupNotFound();
      const revoked = await store.revokeUserGroupEmbedTokens(
        caller.tenant,
        group.teamId,
        auditContextOf(clock, caller),
      );
      if (!revoked) throw failure.userGroupNotFound();
      counted.groups += 1;
      return { userGroup: view(revoked), jti: null };
    },
  };
}

const etagOf = (text: string) => `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
