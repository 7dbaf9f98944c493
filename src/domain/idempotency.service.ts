import { createHash } from 'node:crypto';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { TokenCipher } from './secrets.js';
import type { IdempotencyClaimRef, IdempotencyStore } from '../store/store.js';

/** A finished request is replayed for this long after it was first claimed. */
export const IDEMPOTENCY_RECORD_TTL_MS = 24 * 60 * 60 * 1000;
/** An unfinished claim this old is taken for the leftover of a crash: a retry may take it over. */
export const ABANDONED_CLAIM_MS = 60 * 1000;
const PURGE_INTERVAL_MS = 60 * 1000;
const PURGE_BATCH = 1000;
/** Live keys one API token may hold (SPEC §3): bounds what a caller can make the service keep. */
export const MAX_LIVE_KEYS_PER_TOKEN = 10_000;

const IDEMPOTENCY_KEY_FIELD = 'Idempotency-Key';
const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** What makes two requests the same request: replaying a response to another one would be wrong. */
export interface RequestIdentity {
  method: string;
  /** The route as the router matched it (its pattern, e.g. `/api/admin/data_sources/:id`). */
  route: string;
  params: unknown;
  query: unknown;
  body: unknown;
}

export interface RecordedResponse {
  status: number;
  /** The response body as sent. */
  body: string;
}

/** A request that holds its key: the caller runs it, then completes or releases the claim. */
export interface IdempotencyClaim extends IdempotencyClaimRef {
  fingerprint: string;
}

export type IdempotentStart = { kind: 'execute'; claim: IdempotencyClaim } | { kind: 'replay'; response: RecordedResponse };

export interface IdempotencyServiceDeps {
  store: IdempotencyStore;
  cipher: TokenCipher;
  clock: Clock;
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

/**
 * Safe retries: the first request with a key runs and its response is kept; a retry with the same
 * key and the same request gets that response again instead of running twice. See docs/api.md.
 */
export function createIdempotencyService({ store, cipher, clock }: IdempotencyServiceDeps) {
  let nextPurgeAt = 0;

  // Records only come into being through claims, so purging from the claim path keeps pace with them.
  async function purgeExpired(now: number): Promise<void> {
    if (now < nextPurgeAt) return;
    nextPurgeAt = now + PURGE_INTERVAL_MS;
    const purged = await store.purgeIdempotencyKeys(isoAt(now - IDEMPOTENCY_RECORD_TTL_MS), PURGE_BATCH);
    // A full batch means more are waiting: the next claim purges again rather than a minute later.
    if (purged === PURGE_BATCH) nextPurgeAt = now;
  }

  function openResponse(fingerprint: string, ciphertext: string): RecordedResponse {
    const stored = JSON.parse(cipher.decrypt(ciphertext)) as RecordedResponse & { fingerprint: string };
    // The ciphertext names the request it answers, so one moved to another row does not open there.
    if (stored.fingerprint !== fingerprint) throw new Error('A stored response belongs to another idempotency record.');
    return { status: stored.status, body: stored.body };
  }

  return {
    /** Claims `key` for this request, or answers with the response of the first request that used it. */
    async start(apiTokenId: number, key: string, request: RequestIdentity): Promise<IdempotentStart> {
      assertIdempotencyKey(key);
      const createdAt = clock();
      const now = Date.parse(createdAt);
      await purgeExpired(now);
      const claim = { apiTokenId, keyHash: sha256(key), createdAt, fingerprint: fingerprintOf(request) };
      const result = await store.claimIdempotencyKey({
        ...claim,
        expiredBefore: isoAt(now - IDEMPOTENCY_RECORD_TTL_MS),
        abandonedBefore: isoAt(now - ABANDONED_CLAIM_MS),
        maxLiveKeys: MAX_LIVE_KEYS_PER_TOKEN,
      });
      if (result.claimed) return { kind: 'execute', claim };
      if ('limitReached' in result) {
        throw new AppError('idempotency_key_limit', `This API token holds ${MAX_LIVE_KEYS_PER_TOKEN} live Idempotency-Keys, the most it may; reuse none, retry without a key, or wait until the oldest expire (24 h after their first use).`, {
          field: IDEMPOTENCY_KEY_FIELD,
        });
      }
      const { record } = result;
      if (record.fingerprint !== claim.fingerprint) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another request (method, path, query or body); send a new key with a new request.', {
          field: IDEMPOTENCY_KEY_FIELD,
        });
      }
      if (record.response === null) {
        throw new AppError('idempotency_key_in_progress', 'The first request with this Idempotency-Key is still running; retry shortly.', {
          field: IDEMPOTENCY_KEY_FIELD,
          retryAfterSeconds: 1,
        });
      }
      return { kind: 'replay', response: openResponse(record.fingerprint, record.response) };
    },

    /**
     * Keeps the response for replays, encrypted: it may carry a user group token. False when the
     * claim was taken over meanwhile (the request outlived ABANDONED_CLAIM_MS) and nothing was kept.
     */
    complete(claim: IdempotencyClaim, response: RecordedResponse): Promise<boolean> {
      const plaintext = JSON.stringify({ fingerprint: claim.fingerprint, status: response.status, body: response.body });
      return store.completeIdempotencyKey(claim, cipher.encrypt(plaintext));
    },

    /** Gives the key back, so that a retry runs the request again (after a failure of the service). */
    release(claim: IdempotencyClaim): Promise<void> {
      return store.releaseIdempotencyKey(claim);
    },
  };
}

function assertIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY_SHAPE.test(key)) {
    throw new AppError('invalid_field', 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).', { field: IDEMPOTENCY_KEY_FIELD });
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const isoAt = (milliseconds: number) => new Date(milliseconds).toISOString();

/** SHA-256 of the request in canonical JSON: key order and white space do not make another request. */
function fingerprintOf(request: RequestIdentity): string {
  return sha256(canonicalJson([request.method, request.route, request.params, request.query, request.body]));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`);
    return `{${members.join(',')}}`;
  }
  // undefined (no body, no query) has no JSON form of its own.
  return JSON.stringify(value) ?? 'null';
}
