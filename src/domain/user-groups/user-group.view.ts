import { LRUCache } from 'lru-cache';
import { computedMapping, computedProperties } from './hierarchy.rules.js';
import { mappingToRecord } from './mapping.js';
import type { JsonObject } from '../common.records.js';
import type { UserGroupRecord } from './user-group.records.js';
import type { TokenCipher } from '../secrets.js';
import type { Environment } from '../tenancy.js';
import { computedAccessRules, type AccessRule, type ComputedAccessRule } from '../access-rules/access-rules.rules.js';

/** A group as every response shows it: all of it, with the token in the clear. */
export interface UserGroupView {
  teamId: number;
  token: string;
  name: string;
  providedId: string;
  properties: JsonObject | null;
  mapping: Record<string, string>;
  parentProvidedId: string | null;
  /** Properties and mapping merged down from the root to the group (docs/api.md#hierarchy-demo-groups-and-tags). */
  computedProperties: JsonObject;
  computedMapping: Record<string, string>;
  isDemoGroup: boolean;
  tags: string[];
  /** The group's own access rules, and its effective ones with each owner's team id (docs/api.md#access-rules). */
  accessRules: AccessRule[];
  computedAccessRules: ComputedAccessRule[];
  environment: Environment;
  createdAt: string;
  updatedAt: string;
}

/** A group as the admin API shows it: without its token across environments (docs/api.md#the-admin-api). */
export type UserGroupAdminView = Omit<UserGroupView, 'token'> & { token?: string };

/** Plaintexts kept per process; a few MB at most. */
export const DECRYPTED_TOKEN_CACHE_SIZE = 20_000;

/**
 * Decrypting the token is a large share of a read's cost, so plaintexts are cached by token hash.
 * That key cannot serve a stale token: a rotated token has a new hash, and whether a group (and so
 * its token) exists is still decided by the database read that produced `group`. `knownToken` saves
 * the decryption when the caller already holds the token (verify, rotate, create).
 */
export type UserGroupViewer = ReturnType<typeof createUserGroupViewer>;

/** One per process (the services share it): one cache of plaintexts, not one per service. */
export function createUserGroupViewer(cipher: Pick<TokenCipher, 'decrypt'>) {
  const plaintexts = new LRUCache<string, string>({ max: DECRYPTED_TOKEN_CACHE_SIZE });
  const tokenOf = (group: UserGroupRecord, knownToken: string | undefined): string => {
    const cached = plaintexts.get(group.tokenHash);
    if (cached !== undefined) return cached;
    const token = knownToken ?? cipher.decrypt(group.tokenCiphertext);
    plaintexts.set(group.tokenHash, token);
    return token;
  };
  return (group: UserGroupRecord, knownToken?: string): UserGroupView => {
    // The token joins the fields' own object rather than a spread copy of it: every read makes one.
    const view = userGroupFieldsView(group) as UserGroupView;
    view.token = tokenOf(group, knownToken);
    return view;
  };
}

/** A group as responses show it, but for its token: what a webhook event carries. */
export function userGroupFieldsView(
  group: Omit<UserGroupRecord, 'tokenHash' | 'tokenCiphertext'>,
): Omit<UserGroupView, 'token'> {
  const mapping = mappingToRecord(group.mapping);
  const inherited = computedMapping(group);
  return {
    teamId: group.teamId,
    name: group.name,
    providedId: group.providedId,
    properties: group.properties,
    mapping,
    parentProvidedId: group.parentProvidedId,
    computedProperties: computedProperties(group),
    // A root's computed mapping is its own: the same wire form, not a second one.
    computedMapping: inherited === group.mapping ? mapping : mappingToRecord(inherited),
    isDemoGroup: group.isDemoGroup,
    tags: group.tags,
    accessRules: group.accessRules,
    computedAccessRules: computedAccessRules(group),
    environment: group.environment,
    createdAt: group.createdAt,
    updatedAt: group.updatedAt,
  };
}
