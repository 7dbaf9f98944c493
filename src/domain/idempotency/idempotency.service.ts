import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import { requestFingerprint, type RequestIdentity } from './idempotency.rules.js';
import { hashSecret, type TokenCipher } from '../secrets.js';
import type { IdempotencyClaimRef, IdempotencyOwner, IdempotencyStore } from './idempotency.port.js';

/** A finished request is replayed for this long after it was first claimed. */
export const IDEMPOTENCY_RECORD_TTL_MS = 24 * 60 * 60 * 1000;
/** An unfinished claim this old is taken for the leftover of a crash: a retry may take it over. */
export const ABANDONED_CLAIM_MS = 60 * 1000;
const PURGE_INTERVAL_MS = 60 * 1000;
const PURGE_BATCH = 1000;
/** Live keys one API token (or one person) may hold (docs/api.md#wire-conventions): bounds what a caller can make the service keep. */
export const MAX_LIVE_KEYS_PER_TOKEN = 10_000;
/** The largest response kept for replays: a larger one (a big sync's plan) is answered but not kept. */
export const MAX_KEPT_RESPONSE_BYTES = 1024 * 1024;
/** Stored responses one API token's (or one person's) live keys may hold (ciphertext) before a new key is refused. */
export const MAX_KEPT_BYTES_PER_TOKEN = 64 * 1024 * 1024;

const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface RecordedResponse {
  status: number;
  /** The response body as sent. */
  body: string;
}

/** A request that holds its key: the caller runs it, then completes or releases the claim. */
export type IdempotencyClaim = IdempotencyClaimRef & {
  fingerprint: string;
};

export type IdempotentStart =
  { kind: 'execute'; claim: IdempotencyClaim } | { kind: 'replay'; response: RecordedResponse };

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
    /**
     * Claims the owner's `key` for this request, or answers with the response of the first request
     * of that owner (an API token, a person) that used it: another owner's keys are never seen.
     */
    async start(owner: IdempotencyOwner, key: string, request: RequestIdentity): Promise<IdempotentStart> {
      assertIdempotencyKey(key);
      const createdAt = clock();
      const now = Date.parse(createdAt);
      await purgeExpired(now);
      const claim: IdempotencyClaim = {
        ...owner,
        keyHash: hashSecret(key),
        createdAt,
        fingerprint: requestFingerprint(request),
      };
      const result = await store.claimIdempotencyKey({
        ...claim,
        expiredBefore: isoAt(now - IDEMPOTENCY_RECORD_TTL_MS),
        abandonedBefore: isoAt(now - ABANDONED_CLAIM_MS),
        maxLiveKeys: MAX_LIVE_KEYS_PER_TOKEN,
        maxLiveBytes: MAX_KEPT_BYTES_PER_TOKEN,
      });
      if (result.claimed) return { kind: 'execute', claim };
      if ('limitReached' in result) {
        throw result.limitReached === 'keys'
          ? failure.idempotencyKeyLimit(MAX_LIVE_KEYS_PER_TOKEN)
          : failure.idempotencyBytesLimit(MAX_KEPT_BYTES_PER_TOKEN);
      }
      const { record } = result;
      if (record.fingerprint !== claim.fingerprint) {
        throw failure.idempotencyKeyReused();
      }
      if (record.response === null) {
        throw failure.idempotencyKeyInProgress();
      }
      return { kind: 'replay', response: openResponse(record.fingerprint, record.response) };
    },

    /** Whether a response body this large is kept for replays at all (complete is for those alone). */
    keeps(body: string): boolean {
      return body.length <= MAX_KEPT_RESPONSE_BYTES && Buffer.byteLength(body) <= MAX_KEPT_RESPONSE_BYTES;
    },

    /**
     * Keeps the response for replays, encrypted: it may carry a user group token. False when the
     * claim was taken over meanwhile (the request outlived ABANDONED_CLAIM_MS) and nothing was kept.
     */
    complete(claim: IdempotencyClaim, response: RecordedResponse): Promise<boolean> {
      const plaintext = JSON.stringify({
        fingerprint: claim.fingerprint,
        status: response.status,
        body: response.body,
      });
      return store.completeIdempotencyKey(claim, cipher.encrypt(plaintext));
    },

    /** Gives the key back, so that a retry runs the request again (after a failure of the service). */
    release(claim: IdempotencyClaim): Promise<void> {
      return store.releaseIdempotencyKey(claim);
    },
  };
}

export function assertIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY_SHAPE.test(key)) {
    throw failure.idempotencyKeyShape();
  }
}

const isoAt = (milliseconds: number) => new Date(milliseconds).toISOString();

/** SHA-256 of the request in canonical JSON: key order and white space do not make another request. */
