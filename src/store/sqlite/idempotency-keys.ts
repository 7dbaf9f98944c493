import type { Database } from 'better-sqlite3';
import type {
  IdempotencyClaimAttempt,
  IdempotencyClaimRef,
  IdempotencyClaimResult,
  IdempotencyKeyRecord,
  IdempotencyStore,
} from '../../domain/idempotency/idempotency.port.js';
import type { LiveKeys } from '../../domain/idempotency/idempotency.port.js';
import {
  liveLimitReached,
  storedIdempotencyOwner,
  type StoredIdempotencyOwner,
} from '../../domain/idempotency/idempotency.rules.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

/** The statements of one kind of owner: its column names the owner, its unique key settles races. */
const ownerStatements = (owner: StoredIdempotencyOwner['column']) => {
  const conflict =
    owner === 'api_token_id' ? '(api_token_id, key_hash)' : '(person_key, key_hash) WHERE person_key IS NOT NULL';
  return {
    // The unique key (owner, key_hash) settles races: a conflicting row is replaced only when it is
    // expired, or an abandoned claim of the same request; otherwise nothing is written.
    claim: `INSERT INTO idempotency_keys (${owner}, key_hash, fingerprint, created_at)
      VALUES (@owner, @keyHash, @fingerprint, @createdAt)
      ON CONFLICT ${conflict} DO UPDATE
        SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, response = NULL
        WHERE idempotency_keys.created_at <= @expiredBefore
          OR (idempotency_keys.response IS NULL AND idempotency_keys.created_at <= @abandonedBefore
            AND idempotency_keys.fingerprint = excluded.fingerprint)
      RETURNING 1`,
    // octet_length reads a value's size from its record header, not the value itself.
    countLive: `SELECT count(*) AS count, coalesce(sum(octet_length(response)), 0) AS bytes FROM idempotency_keys
      WHERE ${owner} = @owner AND created_at > @expiredBefore`,
    find: `SELECT fingerprint, created_at AS createdAt, response FROM idempotency_keys
      WHERE ${owner} = @owner AND key_hash = @keyHash`,
    complete: `UPDATE idempotency_keys SET response = @response
      WHERE ${owner} = @owner AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
    release: `DELETE FROM idempotency_keys
      WHERE ${owner} = @owner AND key_hash = @keyHash AND created_at = @createdAt AND response IS NULL`,
  };
};

export function idempotencyKeyMethods(db: Database): Synchronous<IdempotencyStore> {
  const byOwner = {
    api_token_id: preparedOnFirstUse(db, ownerStatements('api_token_id')),
    person_key: preparedOnFirstUse(db, ownerStatements('person_key')),
  };
  const sql = preparedOnFirstUse(db, {
    // By id: a person's row has no api_token_id.
    purge: `DELETE FROM idempotency_keys WHERE id IN
      (SELECT id FROM idempotency_keys WHERE created_at <= @createdBefore LIMIT @limit)`,
  });

  const statementsOf = (ref: IdempotencyClaimRef) => {
    const owner = storedIdempotencyOwner(ref);
    return {
      owned: byOwner[owner.column],
      claim: { owner: owner.value, keyHash: ref.keyHash, createdAt: ref.createdAt },
    };
  };

  // Claim and read (or count) in one write transaction, so the row that beat us cannot vanish in
  // between and claims of one owner cannot pass the limit together.
  const claim = db.transaction((attempt: IdempotencyClaimAttempt): IdempotencyClaimResult => {
    const { owned, claim } = statementsOf(attempt);
    const { fingerprint, expiredBefore, abandonedBefore } = attempt;
    const parameters = { ...claim, fingerprint, expiredBefore, abandonedBefore };
    if (owned.claim.get(parameters) === undefined)
      return { claimed: false, record: owned.find.get(parameters) as IdempotencyKeyRecord };
    const limitReached = liveLimitReached(owned.countLive.get(parameters) as LiveKeys, attempt);
    if (limitReached === undefined) return { claimed: true };
    owned.release.run(claim);
    return { claimed: false, limitReached };
  });

  return {
    claimIdempotencyKey: (attempt) => claim.immediate(attempt),
    completeIdempotencyKey: (ref, response) => {
      const { owned, claim } = statementsOf(ref);
      return owned.complete.run({ ...claim, response }).changes === 1;
    },
    releaseIdempotencyKey: (ref) => {
      const { owned, claim } = statementsOf(ref);
      owned.release.run(claim);
    },
    purgeIdempotencyKeys: (createdBefore, limit) => sql.purge.run({ createdBefore, limit }).changes,
  };
}
