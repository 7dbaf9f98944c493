import type { AuditContext } from '../audit/audit.records.js';
import type { CiphertextCount, CiphertextKind, CiphertextReplacement, StoredCiphertext } from './ciphertext.records.js';

/**
 * What key rotation needs: every column that holds TokenCipher ciphertexts, read and rewritten by
 * key id. A ciphertext's key id is its characters 4 to 11 (`v1.<key id>.…`, src/domain/secrets.ts).
 * Re-encryption is not a change of the row: versions, update times and audit events stay as they are.
 */
export interface CiphertextStore {
  /** Up to `limit` ciphertexts of `kind` not made under `keyId`, of rows whose id is above `afterId`, in id order. */
  listCiphertextsNotUnderKey(
    kind: CiphertextKind,
    keyId: string,
    afterId: number,
    limit: number,
  ): Promise<StoredCiphertext[]>;
  /**
   * In one transaction, writes each replacement whose row still holds the ciphertext it was read
   * with (a compare-and-swap: a row changed, rotated or deleted since is left alone); returns how
   * many were written.
   */
  replaceCiphertexts(replacements: CiphertextReplacement[]): Promise<number>;
  /** How many ciphertexts of each kind each key id encrypts (kinds and keys with none are absent). */
  countCiphertextsByKey(): Promise<CiphertextCount[]>;
  /** Writes the audit event `encryption_key.rotated` (changes from `audit.changes`) into a workspace. */
  recordKeyRotation(workspaceId: number, audit: AuditContext): Promise<void>;
}
