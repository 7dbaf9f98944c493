/*
 * The crypto primitives of @ugs/client in browsers and other runtimes without node:crypto (the
 * `browser` and `default` conditions of `#crypto` in package.json): WebCrypto. Same exports as node.ts.
 */

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
