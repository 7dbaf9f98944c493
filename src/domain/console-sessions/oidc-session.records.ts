import type { Timestamp } from '../common.records.js';
import type { RateLimit } from '../api-tokens/api-token.records.js';
import type { ApiTokenCaller } from '../api-tokens/api-token-admission.js';
import type { Caller, Environment } from '../tenancy.js';
import type { TenantAccess } from './oidc-roles.rules.js';

/** A person as the identity provider names them: (issuer, sub) identifies, the email is only shown. */
export interface Person {
  issuer: string;
  subject: string;
  email: string | null;
}

/**
 * A sign-in under way (docs/security.md, "Console sign-in through an identity provider"): the state
 * is known by its SHA-256, the browser that started it by the SHA-256 of its flow cookie. The nonce and
 * the PKCE verifier are derived from that cookie and the state, so nothing secret is stored.
 */
export interface OidcFlowRecord {
  stateHash: string;
  browserHash: string;
  /** The console page to land on: a path under /console/, checked before it was stored. */
  returnTo: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

/** A console session of a person: like a token's, plus the access decided at sign-in and when it renews. */
export interface PersonSessionRecord {
  id: number;
  person: Person;
  /** Every workspace and environment the person may act in, as decided from the provider's claim. */
  access: TenantAccess[];
  /** Where the session acts now: one of `access`. */
  workspaceId: number;
  environment: Environment;
  createdAt: Timestamp;
  lastSeenAt: Timestamp;
  expiresAt: Timestamp;
  /** From this time on the session is not used until the provider has been asked again. */
  renewAt: Timestamp;
}

export type NewPersonSession = Omit<PersonSessionRecord, 'id' | 'lastSeenAt'> & { idHash: string };

/** Who a person's console session speaks for, in the tenant it acts in, with the access granted there. */
export interface PersonCaller extends Caller {
  actor: { type: 'person'; issuer: string; subject: string; email: string | null };
  /** Every workspace and environment the person may act in (src/http/console/person-access.ts checks it). */
  access: TenantAccess[];
  /** People share the server's default rate limit, in a bucket of their own. */
  rateLimit: RateLimit | null;
}

/** Who a request to /api speaks for: an API token (in a header, or through a token's console session) or a person. */
export type RequestCaller = ApiTokenCaller | PersonCaller;

/** The key of the caller's own rate-limit bucket and in-flight count: per API token, per person. */
export function callerKey(caller: RequestCaller): string {
  return caller.actor.type === 'person'
    ? `person ${caller.actor.issuer} ${caller.actor.subject}`
    : String(caller.actor.apiTokenId);
}

export const isPersonCaller = (caller: RequestCaller): caller is PersonCaller => caller.actor.type === 'person';
