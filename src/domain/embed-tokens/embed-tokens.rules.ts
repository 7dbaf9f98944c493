import { base64url } from 'jose';
import { failure } from '../errors.js';
import type { JsonObject } from '../common.records.js';

/*
 * Rules of minting and verifying embed tokens (docs/api.md#embed-tokens) that need no storage: what per-view
 * properties may do, and the one form of an ES256 signature the service makes and accepts.
 */

/**
 * The `ugs.properties` of a token: the group's computed properties plus the per-view ones, which may
 * only add keys. A renderer cannot tell the minter's values from the owner's, so a key the group or
 * an ancestor sets (to any value, null included) is never overridden by whoever mints.
 */
export function perViewProperties(inherited: JsonObject, perView: JsonObject): JsonObject {
  for (const key of Object.keys(perView)) {
    if (Object.hasOwn(inherited, key)) throw failure.perViewPropertyOverride(key);
  }
  return { ...inherited, ...perView };
}

// P-256's group order n, and n/2: an ECDSA signature (r, s) verifies as (r, n - s) too, so only the
// half s ≤ n/2 ("low S") is made and, where the rule applies, accepted: one signature per token.
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_ORDER = P256_ORDER >> 1n;
const SCALAR_BYTES = 32;

const signatureOf = (jws: string) => base64url.decode(jws.slice(jws.lastIndexOf('.') + 1));
const scalar = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

/** An ES256 signature (r ‖ s, 64 bytes) with its S in the low half, changed in place. */
export function lowSignature(signature: Buffer): Buffer {
  const s = scalar(signature.subarray(SCALAR_BYTES));
  if (s > HALF_ORDER)
    signature.set(Buffer.from((P256_ORDER - s).toString(16).padStart(2 * SCALAR_BYTES, '0'), 'hex'), SCALAR_BYTES);
  return signature;
}

/** Whether the compact ES256 JWS carries a high-S signature (s > n/2). */
export function hasHighS(jws: string): boolean {
  const signature = signatureOf(jws);
  return signature.length === 2 * SCALAR_BYTES && scalar(signature.subarray(SCALAR_BYTES)) > HALF_ORDER;
}
