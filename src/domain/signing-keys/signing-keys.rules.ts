import type { SigningKeyRecord } from './signing-key.records.js';
import type { Environment } from '../tenancy.js';
// The contract's bounds: a token's longest lifetime (with the bound on signing with a held key, how long
// a retired key stays published) and the most keys one issuer publishes.
import { MAX_EMBED_TOKEN_LIFETIME_S, MAX_PUBLISHED_KEYS } from '../../wire/contract.constants.js';

/*
 * The rules of the embed-token signing keys (docs/api.md#embed-tokens) as pure functions: whose issuer a key signs
 * for, how long a retired key stays published, and what a rotation may do to an issuer's published
 * keys. The engines read the rows these name inside the rotation's transaction and apply the plan.
 */

/**
 * The issuer's path under the public URL: each environment of a workspace is its own issuer, so a
 * token of one never verifies under the other's (Customer's is the one issuers had before).
 */
export function issuerPath(workspace: string, environment: Environment): string {
  const base = `/w/${encodeURIComponent(workspace)}`;
  return environment === 'Customer' ? base : `${base}/testing`;
}

/**
 * How long a retired key stays published: the longest lifetime of a token it signed, counted from the
 * last moment it may still sign. That is its retirement plus `heldMs`, the bound for which an instance
 * goes on signing with the current key it holds in memory after a rotation made through another
 * (CURRENT_KEY_HELD_MS, src/domain/signing-keys/signing-keys.service.ts).
 */
const publishedForMs = (heldMs: number) => MAX_EMBED_TOKEN_LIFETIME_S * 1000 + heldMs;

/** A key retired after this moment is still published at `now`: tokens it signed may still be live. */
export function publishedSince(now: string, heldMs: number): string {
  return new Date(Date.parse(now) - publishedForMs(heldMs)).toISOString();
}

/** When the key leaves the JWKS: null while it is current. */
export function publishedUntil(key: Pick<SigningKeyRecord, 'retiredAt'>, heldMs: number): string | null {
  return key.retiredAt === null ? null : new Date(Date.parse(key.retiredAt) + publishedForMs(heldMs)).toISOString();
}

export function isPublished(key: Pick<SigningKeyRecord, 'retiredAt'>, now: string, heldMs: number): boolean {
  const until = publishedUntil(key, heldMs);
  return until === null || Date.parse(until) > Date.parse(now);
}

/** What a rotation does to the issuer's published keys: drop these (none, unless forced), or nothing at all. */
export type SigningKeyRotationPlan = { drop: SigningKeyRecord[] } | { refused: { published: number } };

/**
 * A rotation adds a published key. Within MAX_PUBLISHED_KEYS it drops none; beyond, it is refused
 * until the oldest retire, unless forced (a leaked key cannot wait a day), when it drops the oldest
 * published keys, and with them every token they signed, so that the new key makes MAX_PUBLISHED_KEYS.
 * `published`: the issuer's published keys, newest (the current one) first.
 */
export function planSigningKeyRotation(published: SigningKeyRecord[], force: boolean): SigningKeyRotationPlan {
  const excess = published.length + 1 - MAX_PUBLISHED_KEYS;
  if (excess <= 0) return { drop: [] };
  if (!force) return { refused: { published: published.length } };
  return { drop: published.slice(-excess) };
}
