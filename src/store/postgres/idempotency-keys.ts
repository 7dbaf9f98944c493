import type { IdempotencyClaimResult, IdempotencyStore, LiveKeys } from '../../domain/idempotency/idempotency.port.js';
import { liveLimitReached } from '../../domain/idempotency/idempotency.rules.js';
import type { PostgresDatabase } from './postgres-database.js';
import { iso } from './rows.js';
import { statements } from './statements.js';

interface IdempotencyKeyRow {
  fingerprint: string;
  created_at: Date;
  response: string | null;
}

/** First half of the advisory lock key that serialises one API token's claims; "ugsi" in ASCII. */
const CLAIM_LOCK_CLASS = 0x75677369;

const sql = statements({
  // Claims of one token in turn, so that concurrent ones cannot pass the live-key limit together.
  // The second half of the key is the token id folded into int4; a collision only serialises more.
  lockToken: `SELECT pg_advisory_xact_lock(${CLAIM_LOCK_CLASS}, (@apiTokenId::bigint % 2147483647)::int)`,
  countLive: `SELECT count(*)::int AS count, coalesce(sum(octet_length(response)), 0)::float8 AS bytes FROM idempotency_keys
    WHERE api_token_id = @apiTokenId AND created_at > @expiredBefore::timestamptz`,
  // The unique key (api_token_id, key_hash) settles races: a conflicting row is replaced only when
  // it is expired, or an abandoned claim of the same request. A conflicting row that is not replaced
  // is still locked until the transaction ends, so the read that follows finds it.
  claim: `INSERT INTO idempotency_keys (api_token_id, key_hash, fingerprint, created_at)
    VALUES (@apiTokenId, @keyHash, @fingerprint, @createdAt)
    ON CONFLICT (api_token_id, key_hash) DO UPDATE
      SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, response = NULL
      WHERE idempotency_keys.created_at <= @expiredBefore::timestamptz
        OR (idempotency_keys.response IS NULL AND idempotency_keys.created_at <= @abandonedBefore::timestamptz
          AND idempotency_keys.fingerprint = excluded.fingerprint)
    RETURNING 1`,
  find: `SELECT fingerprint, created_at, response FROM idempotency_keys
    WHERE api_token_id = @apiTokenId AND key_hash = @keyHash`,
  complete: `UPDATE idempotency_keys SET response = @response
    WHERE api_token_id = @apiTokenId AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL
    RETURNING 1`,
  release: `DELETE FROM idempotency_keys
    WHERE api_token_id = @apiTokenId AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
  purge: `DELETE FROM idempotency_keys WHERE (api_token_id, key_hash) IN
    (SELECT api_token_id, key_hash FROM idempotency_keys WHERE created_at <= @createdBefore::timestamptz LIMIT @limit)
    RETURNING 1`,
});

export function idempotencyKeyMethods(db: PostgresDatabase): IdempotencyStore {
  return {
    claimIdempotencyKey: (attempt) =>
      db.transaction(async (tx): Promise<IdempotencyClaimResult> => {
        await tx.rows(sql.lockToken({ apiTokenId: attempt.apiTokenId }));
        if ((await tx.rows(sql.claim({ ...attempt }))).length > 0) {
          const [live] = await tx.rows<LiveKeys>(
            sql.countLive({ apiTokenId: attempt.apiTokenId, expiredBefore: attempt.expiredBefore }),
          );
          const limitReached = live ? liveLimitReached(live, attempt) : 'keys';
          if (limitReached === undefined) return { claimed: true };
          await tx.rows(
            sql.release({ apiTokenId: attempt.apiTokenId, keyHash: attempt.keyHash, createdAt: attempt.createdAt }),
          );
          return { claimed: false, limitReached };
        }
        const [row] = await tx.rows<IdempotencyKeyRow>(sql.find({ ...attempt }));
        if (!row) throw new Error('idempotency key neither claimed nor found');
        return {
          claimed: false,
          record: { fingerprint: row.fingerprint, createdAt: iso(row.created_at), response: row.response },
        };
      }),
    completeIdempotencyKey: async ({ apiTokenId, keyHash, createdAt }, response) =>
      (await db.rows(sql.complete({ apiTokenId, keyHash, createdAt, response }))).length === 1,
    releaseIdempotencyKey: async ({ apiTokenId, keyHash, createdAt }) => {
      await db.rows(sql.release({ apiTokenId, keyHash, createdAt }));
    },
    purgeIdempotencyKeys: async (createdBefore, limit) => (await db.rows(sql.purge({ createdBefore, limit }))).length,
  };
}
