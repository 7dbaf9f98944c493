import { hmacSha256Verifies } from '#crypto';
import type { WebhookEvent } from './types.js';

/** A webhook request that is not what the service sent: wrong signature, stale timestamp, missing headers. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** How far a webhook's timestamp may be from now: replays older than this are refused (the Standard Webhooks default). */
export const WEBHOOK_TOLERANCE_S = 5 * 60;

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  const value =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : (headers as Record<string, string | string[] | undefined>)[name];
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text === '') throw new WebhookVerificationError(`The ${name} header is missing.`);
  return text;
}

/** Standard base64 to bytes; undefined when it is not base64. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Checks a webhook request as the Standard Webhooks specification says and resolves to its event:
 * `webhook-signature` must hold an HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under
 * `secret` (while a rotated secret overlaps, either secret verifies), and the timestamp must be within
 * five minutes of now. `body` is the raw request body, exactly as received: verify before parsing.
 * Asynchronous because WebCrypto is, so that it runs the same in Node and in browsers or workers.
 */
export async function verifyWebhook(
  headers: HeaderBag,
  body: string | Uint8Array,
  secret: string,
  options: { now?: Date; toleranceSeconds?: number } = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_S)) {
    throw new WebhookVerificationError('The webhook-timestamp is missing, malformed or too far from now.');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (key === undefined) throw new WebhookVerificationError('The secret is not a webhook signing secret.');
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',', 2);
    const given = version === 'v1' && signature !== undefined ? fromBase64(signature) : undefined;
    if (given !== undefined && (await hmacSha256Verifies(key, signed, given))) return JSON.parse(text) as WebhookEvent;
  }
  throw new WebhookVerificationError('No webhook-signature matches the secret.');
}
