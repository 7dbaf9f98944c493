/*
 * The crypto primitives of @ugs/client in Node (the `node` condition of `#crypto` in package.json):
 * node:crypto, present in every Node release the package supports. web.ts has the same exports for
 * browsers; the package's users import neither directly.
 */
import { createHmac, createPublicKey, randomUUID, timingSafeEqual, verify } from 'node:crypto';

/** A random UUID (v4): a write's Idempotency-Key. */
export function randomId(): string {
  return randomUUID();
}

/** Whether `signature` is the HMAC-SHA256 of `message` under `key`, compared in constant time. */
export async function hmacSha256Verifies(
  key: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const expected = createHmac('sha256', key).update(message).digest();
  return signature.length === expected.length && timingSafeEqual(expected, signature);
}

/** The bytes a base64url text spells; the caller has checked that it holds only base64url characters. */
export function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  return Buffer.from(text, 'base64url');
}

/**
 * Room for the two synchronous conversions below (an embed token's signing input, up to 8 KiB of
 * text, as UTF-8; a decoded payload): each fills it and is done with it before it returns, never across
 * an await, so one buffer serves every call. It saves a Buffer (and, every few calls, a new 8 KiB pool)
 * per token verified; what does not fit is converted into a Buffer of its own.
 */
const scratch = Buffer.allocUnsafeSlow(3 * 8192);

/** The UTF-8 text a base64url text spells (invalid sequences replaced, as Buffer does). */
export function base64urlText(text: string): string {
  if (text.length > scratch.length) return Buffer.from(text, 'base64url').toString('utf8');
  return scratch.toString('utf8', 0, scratch.write(text, 0, 'base64url'));
}

/**
 * Whether an ES256 signature (r ‖ s, 64 bytes) of `signingInput` (its UTF-8, as jose signs and
 * verifies; the service's are ASCII) verifies under one P-256 public key. Synchronous in Node
 * (WebCrypto's is a promise), so callers await only when they must.
 */
export type Es256Verifier = (signingInput: string, signature: Uint8Array<ArrayBuffer>) => boolean | Promise<boolean>;

/**
 * Prepares one P-256 public key (a JWK's `x` and `y`) for verifying, once: a KeyObject, the form
 * node:crypto verifies with fastest. Rejects what is not a point of P-256.
 */
export async function prepareEs256Verifier(jwk: { x: string; y: string }): Promise<Es256Verifier> {
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, format: 'jwk' });
  // r ‖ s as the token carries it: node:crypto takes IEEE P1363 itself, no DER conversion.
  const options = { key, dsaEncoding: 'ieee-p1363' } as const;
  return (signingInput, signature) => {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit, so what passes this test fits whole.
    if (signingInput.length * 3 > scratch.length)
      return verify('sha256', Buffer.from(signingInput), options, signature);
    return verify('sha256', scratch.subarray(0, scratch.write(signingInput, 0)), options, signature);
  };
}
