/*
 * The crypto primitives of @ugs/client in Node (the `node` condition of `#crypto` in package.json):
 * node:crypto, present in every Node release the package supports. web.ts has the same exports for
 * browsers; the package's users import neither directly.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

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
