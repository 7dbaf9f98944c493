import type {
  IdempotencyClaimRef,
  IdempotencyClaimResult,
  IdempotencyStore,
  LiveKeys,
} from '../../domain/idempotency/idempotency.port.js';
import {
  liveLimitReached,
  storedIdempotencyOwner,
  type StoredIdempotencyOwner,
} from '../../domain/idempotency/idempotency.rules.js';
import type { PostgresDatabase } from './postgres-database.js';
import { iso } from './rows.js';
import { statements } from './statements.js';

interface IdempotencyKeyRow {
  fingerprint: string;
  created_at: Date;
  response: string | null;
}

/** First half of the advisory lock key that serialises one API token's claims; "ugsi" in ASCII. */
const TOKEN_CLAIM_LOCK_CLASS = 0x75677369;
/** The same for one person's claims; "ugsp" in ASCII. */
const PERSON_CLAIM_LOCK_CLASS = 0x75677370;

/** The statements of one kind of owner: its column names the owner, its unique key settles races. */
const ownerStatements = (owner: StoredIdempotencyOwner['column']) =>
  statements({
    // Claims of one owner in turn, so that concurrent ones cannot pass the live-key limit together.
    // The second half of the key is the token id folded into int4, or the person's hashtext; a
    // collision only serialises more.
    lock:
      owner === 'api_token_id'
        ? `SELECT pg_advisory_xact_lock(${TOKEN_CLAIM_LOCK_CLASS}, (@owner::bigint % 2147483647)::int)`
        : `SELECT pg_advisory_xact_lock(${PERSON_CLAIM_LOCK_CLASS}, hashtext(@owner::text))`,
    countLive: `SELECT count(*)::int AS count, coalesce(sum(octet_length(response)), 0)::float8 AS bytes FROM idempotency_keys
      WHERE ${owner} = @owner AND created_at > @expiredBefore::timestamptz`,
    // The unique key (owner, key_hash) settles races: a conflicting row is replaced only when it is
    // expired, or an abandoned claim of the same request. A conflicting row that is not replaced is
    // still locked until the transaction ends, so the read that follows finds it.
    claim: `INSERT INTO idempotency_keys (${owner}, key_hash, fingerprint, created_at)
      VALUES (@owner, @keyHash, @fingerprint, @createdAt)
      ON CONFLICT ${owner === 'api_token_id' ? '(api_token_id, key_hash)' : '(person_key, key_hash) WHERE person_key IS NOT NULL'}
      DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, response = NULL
        WHERE idempotency_keys.created_at <= @expiredBefore::timestamptz
          OR (idempotency_keys.response IS NULL AND idempotency_keys.created_at <= @abandonedBefore::timestamptz
            AND idempotency_keys.fingerprint = excluded.fingerprint)
      RETURNING 1`,
    find: `SELECT fingerprint, created_at, response FROM idempotency_keys
      WHERE ${owner} = @owner AND key_hash = @keyHash`,
    complete: `UPDATE idempotency_keys SET response = @response
      WHERE ${owner} = @owner AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL
      RETURNING 1`,
    release: `DELETE FROM idempotency_keys
      WHERE ${owner} = @owner AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
  });

const byOwner = { api_token_id: ownerStatements('api_token_id'), person_key: ownerStatements('person_key') };

const sql = statements({
  // By id: a person's row has no api_token_id.
  purge: `DELETE FROM idempotency_keys WHERE id IN
    (SELECT id FROM idempotency_keys WHERE created_at <= @createdBefore::timestamptz LIMIT @limit)
    RETURNING 1`,
});

function statementsOf(ref: IdempotencyClaimRef) {
  const owner = storedIdempotencyOwner(ref);
  return {
    owned: byOwner[owner.column],
    claim: { owner: owner.value, keyHash: ref.keyHash, createdAt: ref.createdAt },
  };
}

export function idempotencyKeyMethods(db: PostgresDatabase): IdempotencyStore {
  return {
    claimIdempotencyKey: (attempt) =>
      db.transaction(async (tx): Promise<IdempotencyClaimResult> => {
        const { owned, claim } = statementsOf(attempt);
        const { fingerprint, expiredBefore, abandonedBefore } = attempt;
        await tx.rows(owned.lock({ owner: claim.owner }));
        if ((await tx.rows(owned.claim({ ...claim, fingerprint, expiredBefore, abandonedBefore }))).length > 0) {
          const [live] = await tx.rows<LiveKeys>(owned.countLive({ owner: claim.owner, expiredBefore }));
          const limitReached = live ? liveLimitReached(live, attempt) : 'keys';
          if (limitReached === undefined) return { claimed: true };
          await tx.rows(owned.release(claim));
          return { claimed: false, limitReached };
        }
        const [row] = await tx.rows<IdempotencyKeyRow>(owned.find({ owner: claim.owner, keyHash: claim.keyHash }));
        if (!row) throw new Error('idempotency key neither claimed nor found');
        return {
          claimed: false,
          record: { fingerprint: row.fingerprint, createdAt: iso(row.created_at), response: row.response },
        };
      }),
    completeIdempotencyKey: async (ref, response) => {
      const { owned, claim } = statementsOf(ref);
      return (await db.rows(owned.complete({ ...claim, response }))).length === 1;
    },
    releaseIdempotencyKey: async (ref) => {
      const { owned, claim } = statementsOf(ref);
      await db.rows(owned.release(claim));
    },
    purgeIdempotencyKeys: async (createdBefore, limit) => (await db.rows(sql.purge({ createdBefore, limit }))).length,
  };
}
