import type { Database } from 'better-sqlite3';
import type {
  IdempotencyClaimAttempt,
  IdempotencyClaimResult,
  IdempotencyKeyRecord,
  IdempotencyStore,
} from '../../domain/idempotency/idempotency.port.js';
import type { LiveKeys } from '../../domain/idempotency/idempotency.port.js';
import { liveLimitReached } from '../../domain/idempotency/idempotency.rules.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

export function idempotencyKeyMethods(db: Database): Synchronous<IdempotencyStore> {
  const sql = preparedOnFirstUse(db, {
    // The unique key (api_token_id, key_hash) settles races: a conflicting row is replaced only when
    // it is expired, or an abandoned claim of the same request; otherwise nothing is written.
    claim: `INSERT INTO idempotency_keys (api_token_id, key_hash, fingerprint, created_at)
      VALUES (@apiTokenId, @keyHash, @fingerprint, @createdAt)
      ON CONFLICT (api_token_id, key_hash) DO UPDATE
        SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, response = NULL
        WHERE idempotency_keys.created_at <= @expiredBefore
          OR (idempotency_keys.response IS NULL AND idempotency_keys.created_at <= @abandonedBefore
            AND idempotency_keys.fingerprint = excluded.fingerprint)
      RETURNING 1`,
    // octet_length reads a value's size from its record header, not the value itself.
    countLive: `SELECT count(*) AS count, coalesce(sum(octet_length(response)), 0) AS bytes FROM idempotency_keys
      WHERE api_token_id = @apiTokenId AND created_at > @expiredBefore`,
    find: `SELECT fingerprint, created_at AS createdAt, response FROM idempotency_keys
      WHERE api_token_id = @apiTokenId AND key_hash = @keyHash`,
    complete: `UPDATE idempotency_keys SET response = @response
      WHERE api_token_id = @apiTokenId AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
    release: `DELETE FROM idempotency_keys
      WHERE api_token_id = @apiTokenId AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
    purge: `DELETE FROM idempotency_keys WHERE (api_token_id, key_hash) IN
      (SELECT api_token_id, key_hash FROM idempotency_keys WHERE created_at <= @createdBefore LIMIT @limit)`,
  });

  // Claim and read (or count) in one write transaction, so the row that beat us cannot vanish in
  // between and claims of one token cannot pass the limit together.
  const claim = db.transaction((attempt: IdempotencyClaimAttempt): IdempotencyClaimResult => {
    if (sql.claim.get(attempt) === undefined)
      return { claimed: false, record: sql.find.get(attempt) as IdempotencyKeyRecord };
    const limitReached = liveLimitReached(sql.countLive.get(attempt) as LiveKeys, attempt);
    if (limitReached === undefined) return { claimed: true };
    sql.release.run(attempt);
    return { claimed: false, limitReached };
  });

  return {
    claimIdempotencyKey: (attempt) => claim.immediate(attempt),
    completeIdempotencyKey: ({ apiTokenId, keyHash, createdAt }, response) =>
      sql.complete.run({ apiTokenId, keyHash, createdAt, response }).changes === 1,
    releaseIdempotencyKey: ({ apiTokenId, keyHash, createdAt }) => {
      sql.release.run({ apiTokenId, keyHash, createdAt });
    },
    purgeIdempotencyKeys: (createdBefore, limit) => sql.purge.run({ createdBefore, limit }).changes,
  };
}
