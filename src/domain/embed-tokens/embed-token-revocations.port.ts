import type { AuditContext } from '../audit/audit.records.js';
import type { Tenant } from '../tenancy.js';
import type { UserGroupRecord } from '../user-groups/user-group.records.js';

/** A group's tokens minted under a token generation below `beforeGeneration` are revoked. */
export interface GroupRevocationRecord {
  teamId: number;
  beforeGeneration: number;
  /** Unix seconds: no token the entry matches is valid after it. */
  expiresAt: number;
}

/** One embed token revoked by its `jti`, until its own `exp`. */
export interface TokenRevocationRecord {
  jti: string;
  expiresAt: number;
}

/** An issuer's revocations still in force, and the highest entry number among them. */
export interface RevocationListRecord {
  generation: number;
  groups: GroupRevocationRecord[];
  tokens: TokenRevocationRecord[];
}

export interface TokenRevocation {
  tenant: Tenant;
  teamId: number;
  jti: string;
  expiresAt: number;
}

/**
 * Revocations of embed tokens (docs/api.md, "Revoking embed tokens"). Group entries are written by the
 * database itself (triggers of migration 15/16) whenever a group's token generation rises or the group
 * is deleted, in that change's transaction; this port adds the explicit revokes and the reads. `now`
 * is Unix seconds: entries whose `expiresAt` is not after it are out of force.
 */
export interface EmbedTokenRevocationStore {
  /** The random key, made by the migration, under which groups are named in published documents. */
  embedRevocationSecret(): Promise<string>;
  /**
   * Revokes one token of a group that exists in the tenant (its audit event, `embed_token.revoked`,
   * in the same transaction); again for the same `jti` changes nothing more. Null when the group is gone.
   */
  revokeEmbedToken(revocation: TokenRevocation, audit: AuditContext): Promise<UserGroupRecord | null>;
  /** Raises the group's token generation (the trigger writes the entry), audited; null when there is no such group. */
  revokeUserGroupEmbedTokens(tenant: Tenant, teamId: number, audit: AuditContext): Promise<UserGroupRecord | null>;
  /**
   * Online verify's one read: the group of the tenant with this team_id, and whether the token of this
   * `jti` is revoked on its own, in one statement; null when there is no such group.
   */
  findEmbedTokenGroup(
    tenant: Tenant,
    teamId: number,
    jti: string,
  ): Promise<{ group: UserGroupRecord; revoked: boolean } | null>;
  /** A text that changes whenever the tenant's entries in force do (an ETag's basis), read without the entries. */
  embedTokenRevocationsVersion(tenant: Tenant, now: number): Promise<string>;
  listEmbedTokenRevocations(tenant: Tenant, now: number): Promise<RevocationListRecord>;
  /** Deletes every entry out of force; answers how many. */
  pruneEmbedTokenRevocations(now: number): Promise<number>;
}
