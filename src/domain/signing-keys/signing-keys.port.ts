import type { AuditContext } from '../audit/audit.records.js';
import type { Tenant } from '../tenancy.js';
import type { NewSigningKey, SigningKeyRecord } from './signing-key.records.js';

/** How a rotation came out: done (with the keys a forced one dropped), or refused by the published-key bound. */
export type SigningKeyRotation =
  | { status: 'rotated'; current: SigningKeyRecord; retired: SigningKeyRecord | null; dropped: SigningKeyRecord[] }
  | { status: 'limit_reached'; published: number };

/**
 * The embed-token signing keys, each of one issuer: a workspace's environment (a Tenant). Reads take
 * one issuer's keys by index, never every key a workspace ever had.
 */
export interface SigningKeyStore {
  /** The issuer's current key and the keys retired after `retiredAfter`, newest first (the current one leads). */
  listSigningKeys(issuer: Tenant, retiredAfter: string): Promise<SigningKeyRecord[]>;
  /** The issuer's current key, if it has one. */
  findCurrentSigningKey(issuer: Tenant): Promise<SigningKeyRecord | null>;
  /** The issuer's key `kid`, retired or not; null for a kid of no key or of another issuer's. */
  findSigningKey(issuer: Tenant, kid: string): Promise<SigningKeyRecord | null>;
  /**
   * Makes `key` its issuer's first current key, audited, unless it has one already (another
   * instance won the race): then nothing is written and the existing current key is returned.
   */
  insertFirstSigningKey(key: NewSigningKey, context: AuditContext): Promise<SigningKeyRecord>;
  /**
   * In one transaction, serialised with every other rotation of the issuer: reads the issuer's keys
   * retired after `publishedSince` (and the current one), applies `planSigningKeyRotation`
   * (src/domain/signing-keys/signing-keys.rules.ts) with `force`, and unless refused deletes the keys it drops,
   * retires the current key (if any) at `key.createdAt` and makes `key` current, audited.
   */
  rotateSigningKey(
    key: NewSigningKey,
    context: AuditContext,
    bound: { publishedSince: string; force: boolean },
  ): Promise<SigningKeyRotation>;
  /**
   * When the service began signing low-S (docs/api.md#embed-tokens): when the migration that brought it was applied.
   * A high-S signature on a token issued from then on is refused by verify.
   */
  lowSignaturesSince(): Promise<string>;
}
