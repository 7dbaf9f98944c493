import { createHmac } from 'node:crypto';

/** The key a `whsec_…` secret stands for: the bytes its base64 part encodes. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * The Standard Webhooks signature header: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` under
 * each secret, space-separated (two while a rotated secret overlaps the new one).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const content = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`)
    .join(' ');
}
