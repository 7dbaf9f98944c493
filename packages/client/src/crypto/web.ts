/*
 * The crypto primitives of @ugs/client in browsers and other runtimes without node:crypto (the
 * `browser` and `default` conditions of `#crypto` in package.json): WebCrypto. Same exports as node.ts.
 */
import { base64url } from 'jose';

/**
 * A random UUID (v4): a write's Idempotency-Key. Made from getRandomValues, which every browser has
 * on any page; crypto.randomUUID exists only in secure contexts (HTTPS or localhost).
 */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // the RFC 9562 variant
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether `signature` is the HMAC-SHA256 of `message` under `key` (WebCrypto's verify compares in constant time). */
export async function hmacSha256Verifies(
  key: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const hmacKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify('HMAC', hmacKey, signature, message);
}

/** The bytes a base64url text spells; the caller has checked that it holds only base64url characters. */
export function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  return base64url.decode(text) as Uint8Array<ArrayBuffer>;
}

const utf8 = new TextDecoder();

/** The UTF-8 text a base64url text spells (invalid sequences replaced, as Buffer does). */
export function base64urlText(text: string): string {
  return utf8.decode(base64url.decode(text));
}

/**
 * Whether an ES256 signature (r ‖ s, 64 bytes) of `signingInput` (its UTF-8, as jose signs and
 * verifies; the service's are ASCII) verifies under one P-256 public key. Synchronous in Node
 * (WebCrypto's is a promise), so callers await only when they must.
 */
export type Es256Verifier = (signingInput: string, signature: Uint8Array<ArrayBuffer>) => boolean | Promise<boolean>;

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' } as const;
const encoder = new TextEncoder();

/**
 * Prepares one P-256 public key (a JWK's `x` and `y`) for verifying, once: a CryptoKey, imported a
 * single time rather than per token. Rejects what is not a point of P-256.
 */
export async function prepareEs256Verifier(jwk: { x: string; y: string }): Promise<Es256Verifier> {
  const key = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, ECDSA_P256, false, [
    'verify',
  ]);
  return (signingInput, signature) => crypto.subtle.verify(ECDSA_SHA256, key, signature, encoder.encode(signingInput));
}
