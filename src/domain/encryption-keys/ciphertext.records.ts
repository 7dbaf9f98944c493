/**
 * The kinds of secret stored encrypted under the TokenCipher (each one column of one table).
 * Key rotation re-encrypts every kind, and `ugs keys list` counts each.
 */
export const CIPHERTEXT_KINDS = [
  'user_group_token',
  'idempotent_response',
  'signing_key',
  'webhook_secret',
  'webhook_previous_secret',
] as const;

export type CiphertextKind = (typeof CIPHERTEXT_KINDS)[number];

/** One stored ciphertext: which kind, the id of its row, and the ciphertext itself. */
export interface StoredCiphertext {
  kind: CiphertextKind;
  id: number;
  ciphertext: string;
}

/** Replace `ciphertext` by `replacement`, only if the row still holds `ciphertext`. */
export interface CiphertextReplacement extends StoredCiphertext {
  replacement: string;
  /** A hosted group token's keyed hash under the key of `replacement`, written with it (src/domain/secrets.ts). */
  lookupHash?: string;
}

export interface CiphertextCount {
  kind: CiphertextKind;
  keyId: string;
  count: number;
}
