import type { JsonObject, Timestamp } from '../common.records.js';
import type { Environment } from '../tenancy.js';

/** One of a workspace's embed-token signing key pairs (ES256). */
export interface SigningKeyRecord {
  id: number;
  workspaceId: number;
  /** The environment whose issuer the key signs for (docs/api.md#embed-tokens): each environment has its own keys. */
  environment: Environment;
  /** The JWK thumbprint (RFC 7638) of the public key: the `kid` of the tokens it signs. */
  kid: string;
  /** The public key as a JWK (kty, crv, x, y). */
  publicJwk: JsonObject;
  /** The private key's JWK, as a keyring ciphertext. */
  privateKeyCiphertext: string;
  createdAt: Timestamp;
  /** When a newer key took over; null for the current key. */
  retiredAt: Timestamp | null;
}

export type NewSigningKey = Omit<SigningKeyRecord, 'id' | 'retiredAt'>;
