import { randomUUID, sign } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { NO_USAGE_COUNTING, type UsageCounter } from '../usage/usage-counter.js';
import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import { hasHighS, lowSignature, perViewProperties } from './embed-tokens.rules.js';
import {
  assertLifecycleInput,
  carriedViewProperties,
  expiryWithin,
  newSession,
  type EmbedSessionClaim,
  type LifecycleInput,
} from './embed-token-sessions.rules.js';
import { computedMapping, computedProperties } from '../user-groups/hierarchy.rules.js';
import { mappingToRecord } from '../user-groups/mapping.js';
import type { JsonObject } from '../common.records.js';
import type { UserGroupRecord } from '../user-groups/user-group.records.js';
import { assertPropertiesWithinLimits } from '../user-groups/properties.rules.js';
import {
  EMBED_TOKEN_ALGORITHM,
  EMBED_TOKEN_TYPE,
  type SigningKey,
  type SigningKeyService,
} from '../signing-keys/signing-keys.service.js';
import { issuerPath } from '../signing-keys/signing-keys.rules.js';
import type { Caller, Environment } from '../tenancy.js';
import type { UserGroupView, UserGroupViewer } from '../user-groups/user-group.view.js';
import { providedIdOf } from '../user-groups/user-groups.service.js';
import type { UserGroupStore } from '../user-groups/user-groups.port.js';
import type { WorkspaceStore } from '../workspaces/workspaces.port.js';
import type { EmbedTokenRevocationStore } from './embed-token-revocations.port.js';
import type { RevocationNames } from './embed-token-revocations.service.js';
import type { ResolvedAccessRule } from '../access-rules/access-rules.rules.js';
import { resolvedAccessRules, type ResolvedRulesText } from '../access-rules/access-rules-resolution.rules.js';
import {
  DEFAULT_EMBED_TOKEN_LIFETIME_S,
  MAX_EMBED_TOKEN_BYTES,
  MAX_EMBED_TOKEN_LIFETIME_S,
} from '../../wire/contract.constants.js';

/** The audience of a token minted without an embed_id. */
export const ANY_EMBED_AUDIENCE = 'ugs-embed';

/** A compact JWS: three base64url parts. A group token (`ugt_…`) never looks like one. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const isEmbedTokenShaped = (token: string) => COMPACT_JWS.test(token);

export interface MintEmbedTokenInput extends LifecycleInput {
  userGroupId: string | number;
  expiresIn?: number;
  embedId?: string;
  origin?: string;
  properties?: JsonObject;
  /**
   * A refresh (embed-token-introspection.service.ts): the session goes on, and the per-view
   * properties of the token refreshed are carried over (never over the group's own values).
   */
  renewal?: { session: EmbedSessionClaim; properties: JsonObject; teamId: number; jti: string };
}

/** What the `ugs` claim carries (docs/api.md#embed-tokens). */
export interface UgsClaim {
  team_id: number;
  environment: string;
  workspace: string;
  properties: JsonObject;
  mapping: Record<string, string>;
  is_demo_group: boolean;
  origin: string | null;
  /** The group's effective access rules, property references resolved (docs/api.md#access-rules); absent from tokens minted before them. */
  access_rules?: ResolvedAccessRule[];
  /** Present (true) on a single-use token only (docs/api.md#single-use-tokens). */
  single_use?: true;
  /** Present on a refreshable token only (docs/api.md#refresh-within-a-session). */
  session?: EmbedSessionClaim;
}

/** Every claim of a verified embed token. */
export interface EmbedTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  ugs: UgsClaim;
}

export interface VerifiedEmbed {
  userGroup: UserGroupView;
  embed: {
    embedId: string | null;
    origin: string | null;
    properties: JsonObject;
    accessRules: ResolvedAccessRule[];
    expiresAt: string;
  };
  /** The token's claims as signed, for introspection and refresh. */
  claims: EmbedTokenClaims;
}

export interface EmbedTokenServiceDeps {
  store: Pick<UserGroupStore, 'findUserGroupByProvidedId' | 'findUserGroupByTeamId'> &
    Pick<WorkspaceStore, 'findWorkspaceById' | 'findWorkspaceByName'> &
    Pick<EmbedTokenRevocationStore, 'findEmbedTokenGroup'>;
  /** How a group is named in revocation documents: its tokens carry the same name (`grp`). */
  names: RevocationNames;
  signingKeys: SigningKeyService;
  view: UserGroupViewer;
  clock: Clock;
  /** The public URL of the service, without a trailing slash: the base of every issuer (issuerPath). */
  publicUrl: () => string;
  /** Counts embed tokens minted and verified (docs/api.md#usage-per-group). */
  usage?: UsageCounter;
}

export type EmbedTokenService = ReturnType<typeof createEmbedTokenService>;

/**
 * Short-lived signed credentials for the browser (docs/api.md#embed-tokens). The `jti` starts with the group's token
 * generation at minting ("<generation>.<uuid>"): verify refuses a token minted before the group
 * token's latest rotation by comparing it with the group's, whatever the clock says.
 */
export function createEmbedTokenService({
  store,
  signingKeys,
  view,
  clock,
  publicUrl,
  names,
  usage = NO_USAGE_COUNTING,
}: EmbedTokenServiceDeps) {
  const notFound = failure.userGroupNotFound;
  const workspaceNames = new Map<number, string>();
  /** ES256 signature checks run by verify, for /metrics (ugs_embed_token_signature_checks_total). */
  let signatureChecks = 0;

  async function workspaceName(workspaceId: number): Promise<string> {
    let name = workspaceNames.get(workspaceId);
    if (name === undefined) {
      // A workspace's name never changes, so it is read once per process.
      name = (await store.findWorkspaceById(workspaceId))?.name ?? String(workspaceId);
      workspaceNames.set(workspaceId, name);
    }
    return name;
  }

  /** Each environment of a workspace is its own issuer, with its own keys (docs/api.md#embed-tokens). */
  const issuerOf = (workspace: string, environment: Environment) =>
    `${publicUrl()}${issuerPath(workspace, environment)}`;

  return {
    issuerOf,

    /** How many embed token signatures this process has checked: only admitted requests cost one. */
    signatureChecks: () => signatureChecks,

    /**
     * The public keys of an issuer's JWKS (docs/api.md#embed-tokens). A workspace that does not exist has none, as one
     * whose issuer has no key yet: the public paths do not tell which workspaces exist.
     */
    async publishedKeys(workspaceName: string, environment: Environment): Promise<JsonObject[]> {
      const workspace = await store.findWorkspaceByName(workspaceName);
      if (!workspace) return [];
      return (await signingKeys.published({ workspaceId: workspace.id, environment })).map((key) => key.publicJwk);
    },

    async mint(
      caller: Caller,
      input: MintEmbedTokenInput,
    ): Promise<{ embedToken: string; expiresAt: string; sessionEndsAt?: string }> {
      assertPropertiesWithinLimits(input.properties ?? {});
      if (input.origin !== undefined) assertWebOrigin(input.origin);
      assertLifecycleInput(input);
      // The lookup confirms a remembered API token beside the group and admits the request (the
      // admitting group reads), as get-existing's does: one read instead of two.
      const group = await store.findUserGroupByProvidedId(
        caller.tenant,
        providedIdOf(input.userGroupId),
        caller.tokenCheck,
      );
      // A refresh is for the group the token was minted for, whose token has not been rotated since:
      // a rotation between the refresh's verify and this read must not give the session a new life.
      if (
        !group ||
        (input.renewal && (group.teamId !== input.renewal.teamId || !mintedUnder(input.renewal.jti, group)))
      )
        throw notFound();
      // The group's inherited values as its ancestors are now (docs/api.md#hierarchy-demo-groups-and-tags), and the view's own added.
      const inherited = computedProperties(group);
      const { renewal } = input;
      const overrides = renewal
        ? carriedViewProperties(renewal.properties, renewal.session.view_keys, inherited)
        : (input.properties ?? {});
      const properties = perViewProperties(inherited, overrides);
      assertPropertiesWithinLimits(properties);
      // Rules resolve against what the group's owner set, never against the per-view values (docs/api.md#access-rules).
      const accessRules = resolvedAccessRules(group, inherited);

      const workspace = await workspaceName(caller.tenant.workspaceId);
      const named = names.groupName(caller.tenant, group.teamId);
      const groupName = typeof named === 'string' ? named : await named;
      const issuedAt = Math.floor(Date.parse(clock()) / 1000);
      const session = renewal
        ? { ...renewal.session, view_keys: Object.keys(overrides) }
        : input.sessionSeconds === undefined
          ? undefined
          : newSession(issuedAt, input.sessionSeconds, input.inactivitySeconds, Object.keys(overrides));
      const expiresAt = expiryWithin(issuedAt, input.expiresIn ?? DEFAULT_EMBED_TOKEN_LIFETIME_S, session);
      const ugs: Omit<UgsClaim, 'access_rules'> = {
        team_id: group.teamId,
        environment: group.environment,
        workspace,
        properties,
        mapping: mappingToRecord(computedMapping(group)),
        is_demo_group: group.isDemoGroup,
        origin: input.origin ?? null,
        ...(input.singleUse === true ? { single_use: true as const } : {}),
        ...(session ? { session } : {}),
      };
      const claims = JSON.stringify({
        iss: issuerOf(workspace, caller.tenant.environment),
        sub: group.providedId,
        aud: input.embedId ?? ANY_EMBED_AUDIENCE,
        iat: issuedAt,
        nbf: issuedAt,
        exp: expiresAt,
        jti: `${group.tokenGeneration}.${randomUUID()}`,
        // What an offline verifier matches against the issuer's revocation document: the group's keyed
        // name and the token generation, which orders tokens finer than iat (docs/api.md).
        grp: groupName,
        gen: group.tokenGeneration,
      });
      const key = await signingKeys.signingKey(caller.tenant, caller.actor);
      const embedToken = signedToken(key, encodedClaims(JSON.stringify(ugs), accessRules, claims));
      const bytes = embedToken.length; // ASCII: base64url and dots
      if (bytes > MAX_EMBED_TOKEN_BYTES) {
        // The rules are at fault when the token would fit without them (their base64url share of the payload).
        const ruleBytes = Math.ceil((Buffer.byteLength(accessRules.json) * 4) / 3);
        throw failure.embedTokenTooLarge(
          MAX_EMBED_TOKEN_BYTES / 1024,
          accessRules.json !== '[]' && bytes - ruleBytes <= MAX_EMBED_TOKEN_BYTES ? 'access_rules' : 'properties',
        );
      }
      usage.minted(caller.tenant, group.teamId);
      const isoAt = (seconds: number) => new Date(seconds * 1000).toISOString();
      return {
        embedToken,
        expiresAt: isoAt(expiresAt),
        ...(session ? { sessionEndsAt: isoAt(session.ends_at) } : {}),
      };
    },

    /**
     * The online check (docs/api.md#embed-tokens): the group and the token's embed while signature,
     * issuer (the caller's environment's), lifetime, tenant and the group token's generation all
     * hold; else user_group_not_found.
     */
    async verify(caller: Caller, token: string): Promise<VerifiedEmbed> {
      const workspace = await workspaceName(caller.tenant.workspaceId);
      const claims = await verifiedClaims(token, caller, issuerOf(workspace, caller.tenant.environment));
      const ugs = claims?.ugs;
      if (!claims || !ugs || ugs.environment !== caller.tenant.environment || ugs.workspace !== workspace)
        throw notFound();
      // The group, and whether the token was revoked on its own (POST /api/user/embed_token/revoke with
      // the token), in one read; a group's revocation raised its generation, which mintedUnder refuses.
      const found =
        typeof claims.jti === 'string' ? await store.findEmbedTokenGroup(caller.tenant, ugs.team_id, claims.jti) : null;
      const group = found?.group;
      if (!group || found.revoked || !mintedUnder(claims.jti, group)) throw notFound();
      const verified = {
        userGroup: view(group),
        embed: {
          embedId: claims.aud === ANY_EMBED_AUDIENCE ? null : String(claims.aud),
          origin: ugs.origin,
          properties: ugs.properties,
          accessRules: ugs.access_rules ?? [],
          expiresAt: new Date(Number(claims.exp) * 1000).toISOString(),
        },
        claims: claims as unknown as EmbedTokenClaims,
      };
      usage.verified(caller.tenant, group.teamId);
      return verified;
    },

    /**
     * The team, `jti` and `exp` of a token of the caller's tenant whose signature, issuer and lifetime
     * hold, whatever became of its group since; null for any other string. What a revoke checks:
     * only whoever holds an API token of the token's own environment can revoke it.
     */
    async ownedClaims(caller: Caller, token: string): Promise<{ teamId: number; jti: string; exp: number } | null> {
      const workspace = await workspaceName(caller.tenant.workspaceId);
      const claims = await verifiedClaims(token, caller, issuerOf(workspace, caller.tenant.environment));
      const ugs = claims?.ugs;
      if (!claims || !ugs || ugs.environment !== caller.tenant.environment || ugs.workspace !== workspace) return null;
      if (typeof claims.jti !== 'string' || typeof ugs.team_id !== 'number') return null;
      return { teamId: ugs.team_id, jti: claims.jti, exp: Number(claims.exp) };
    },
  };

  async function verifiedClaims(token: string, caller: Caller, issuer: string) {
    try {
      const { kid } = decodeProtectedHeader(token);
      const key = kid === undefined ? null : await signingKeys.verificationKey(caller.tenant, kid);
      if (!key) return null;
      signatureChecks++;
      const { payload } = await jwtVerify<{ ugs?: UgsClaim }>(token, key.key, {
        issuer,
        algorithms: [EMBED_TOKEN_ALGORITHM],
        typ: EMBED_TOKEN_TYPE,
        currentDate: new Date(clock()),
        maxTokenAge: MAX_EMBED_TOKEN_LIFETIME_S,
      });
      // One signature per token: the high-S twin of a token issued since the service signs low-S (from
      // that second on, iat having whole seconds) is refused; an older token, which may be high-S, stays
      // valid until it expires.
      if (hasHighS(token) && Number(payload.iat) >= Math.floor((await signingKeys.lowSignaturesSince()) / 1000))
        return null;
      return payload;
    } catch {
      // Malformed, tampered, expired, not yet valid, another issuer: all the same to the caller.
      return null;
    }
  }
}

const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** The text with JSON whitespace after it, up to a whole number of 3-byte groups: base64url's unit. */
function padded(text: string): string {
  const over = Buffer.byteLength(text) % 3;
  return over === 0 ? text : `${text}${' '.repeat(3 - over)}`;
}

/** Each answer's rules as base64url, encoded at its first mint (docs/performance-history.md); the answer is shared while its cache keeps it. */
const encodedRules = new WeakMap<ResolvedRulesText, string>();

/**
 * The payload of a token, base64url: `{"ugs":{…,"access_rules":[…]},"iss":…}`, the rules last in
 * `ugs`, which comes first. Without rules it is encoded whole. With rules, the text before them and
 * the rules' own text are each padded with spaces (JSON whitespace, which every parser skips) to whole
 * 3-byte groups, so that each encodes on its own and the rules' base64url, up to 7 KB of a token's 8,
 * is encoded once per answer rather than once per mint.
 */
function encodedClaims(ugsJson: string, rules: ResolvedRulesText, claims: string): string {
  const head = `{"ugs":${ugsJson.slice(0, -1)},"access_rules":`;
  const tail = `},${claims.slice(1)}`;
  if (rules.json === '[]') return base64url(`${head}[]${tail}`);
  let encoded = encodedRules.get(rules);
  if (encoded === undefined) {
    encoded = base64url(padded(rules.json));
    encodedRules.set(rules, encoded);
  }
  return `${base64url(padded(head))}${encoded}${base64url(tail)}`;
}

/**
 * One buffer for every mint's signing input: a sign on the thread pool copies its input when it is
 * called (node:crypto's asynchronous jobs do), and a fresh buffer of a token with rules (~7 KB, past
 * Buffer's pool) cost ~3 µs to allocate. An input longer than this, which only an oversize token has,
 * gets its own.
 */
const signingScratch = Buffer.allocUnsafe(16 * 1024);

function signingBytes(signingInput: string): Buffer {
  if (signingInput.length > signingScratch.length) return Buffer.from(signingInput, 'latin1');
  return signingScratch.subarray(0, signingScratch.write(signingInput, 0, 'latin1'));
}

/**
 * The compact JWS of the claims (`payload`, their base64url) under `key`: ES256 by node:crypto with
 * the prepared key, on the event loop. The thread pool's callback form kept the loop free for the
 * signature's ~19 µs but cost ~7 µs more CPU a mint (the hop and its promise), and minting is bound by
 * CPU, not by waiting (docs/performance.md, "Minting"). The signature's S made low (one signature per
 * token, docs/api.md#embed-tokens).
 */
function signedToken(key: SigningKey, payload: string): string {
  const signingInput = `${key.encodedHeader}.${payload}`;
  const signature = sign('sha256', signingBytes(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${lowSignature(signature).toString('base64url')}`;
}

function mintedUnder(jti: string | undefined, group: UserGroupRecord): boolean {
  return jti !== undefined && jti.split('.', 1)[0] === String(group.tokenGeneration);
}

/** `https://app.example.com` or `http://localhost:3000`: a scheme, a host, a port at most. */
function assertWebOrigin(origin: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
    throw failure.embedOrigin();
  }
}
