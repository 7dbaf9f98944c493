import { hashSecret } from '../secrets.js';
import type { IdempotencyClaimAttempt, IdempotencyOwner, LiveKeys } from './idempotency.port.js';

/*
 * What makes a retry with an Idempotency-Key the same request as the first one (docs/api.md#safe-retries-idempotency-key): a replayed
 * response to another request would be wrong, so a key reused for another request is refused.
 */

/** What makes two requests the same request: replaying a response to another one would be wrong. */
export interface RequestIdentity {
  method: string;
  /** The route as the router matched it (its pattern, e.g. `/api/admin/data_sources/:id`). */
  route: string;
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * Two requests are the same request when method, route, path parameters, query and body are equal
 * as JSON values: key order and white space do not count.
 */
export function requestFingerprint(request: RequestIdentity): string {
  return hashSecret(canonicalJson([request.method, request.route, request.params, request.query, request.body]));
}

export function canonicalJson(value: unknown): string {
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

/** The one rule both stores apply inside the claim's transaction: which limit, if any, the claim passes. */
export function liveLimitReached(live: LiveKeys, attempt: IdempotencyClaimAttempt): 'keys' | 'bytes' | undefined {
  if (live.count > attempt.maxLiveKeys) return 'keys';
  if (live.bytes >= attempt.maxLiveBytes) return 'bytes';
  return undefined;
}

/** The owner as both stores keep it: the API token's id, or the person as JSON text (unambiguous whatever issuer and sub hold). */
export type StoredIdempotencyOwner =
  { column: 'api_token_id'; value: number } | { column: 'person_key'; value: string };

export function storedIdempotencyOwner(owner: IdempotencyOwner): StoredIdempotencyOwner {
  if (owner.person === undefined) return { column: 'api_token_id', value: owner.apiTokenId };
  const { workspaceId, issuer, subject } = owner.person;
  return { column: 'person_key', value: JSON.stringify([workspaceId, issuer, subject]) };
}
