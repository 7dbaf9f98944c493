import { createHmac } from 'node:crypto';
import type { AuditEntry } from '../audit/audit-entry.js';
import { groupAudit, groupEntry } from '../user-groups/user-groups.rules.js';
import type { UserGroupRecord } from '../user-groups/user-group.records.js';
import type { Tenant } from '../tenancy.js';
import type { RevocationListRecord } from './embed-token-revocations.port.js';

/*
 * Rules of embed-token revocation that need no storage: how a group is named in a public document
 * (a keyed hash of its team_id, which neither a rename nor a change of provided_id touches and nobody
 * without the key can compute), which token an entry matches, and the document's form.
 */

/** The key of one issuer: each issuer's names are unrelated to another's. */
export function issuerRevocationKey(secret: string, tenant: Tenant): Buffer {
  return createHmac('sha256', secret).update(`ugs-revocation:${tenant.workspaceId}:${tenant.environment}`).digest();
}

/** A group's name in its issuer's revocation document and in its tokens' `grp` claim: 128 bits, base64url. */
export function revocationGroupName(issuerKey: Buffer, teamId: number): string {
  return createHmac('sha256', issuerKey).update(String(teamId)).digest().subarray(0, 16).toString('base64url');
}

/** The token generation a `jti` (`<generation>.<uuid>`) was minted under. */
export function generationOf(jti: string): number {
  return Number(jti.split('.', 1)[0]);
}

/** The published document (docs/api.md, "Revocation document"), as text. */
export function revocationDocument(
  issuer: string,
  maxAgeS: number,
  list: RevocationListRecord,
  nameOf: (teamId: number) => string,
): string {
  // One entry per group: the highest generation bound, which implies every lower one.
  const groups = new Map<number, [string, number, number]>();
  for (const { teamId, beforeGeneration, expiresAt } of list.groups) {
    const known = groups.get(teamId);
    if (!known) groups.set(teamId, [nameOf(teamId), beforeGeneration, expiresAt]);
    else {
      known[1] = Math.max(known[1], beforeGeneration);
      known[2] = Math.max(known[2], expiresAt);
    }
  }
  return JSON.stringify({
    issuer,
    generation: list.generation,
    max_age: maxAgeS,
    groups: [...groups.values()],
    tokens: list.tokens.map(({ jti, expiresAt }) => [jti, expiresAt]),
  });
}

/** The audit (and webhook) event of an explicit revoke: one token (`jti`) or every current token of the group. */
export function revocationEntry(group: UserGroupRecord, jti: string | null): AuditEntry {
  const changes = {
    embed_tokens_revoked: { before: null, after: jti === null ? 'all' : 'one' },
    ...(jti === null ? {} : { jti: { before: null, after: jti } }),
  };
  return { ...groupEntry(groupAudit('user_group.updated', changes), group), action: 'embed_token.revoked' };
}
