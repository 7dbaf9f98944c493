import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { NewSigningKey, SigningKeyRecord } from '../../domain/signing-keys/signing-key.records.js';
import type { Audited } from '../../domain/audit/audit-entry.js';
import { signingKeyChanged } from '../../domain/catalog.rules.js';
import { planSigningKeyRotation } from '../../domain/signing-keys/signing-keys.rules.js';
import type { Environment } from '../../domain/tenancy.js';
import { LOW_S_MIGRATION_VERSION, SIGNING_KEY_COLUMNS, signingKeyFromRow } from '../signing-key-rows.js';
import type { SigningKeyRotation, SigningKeyStore } from '../../domain/signing-keys/signing-keys.port.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, toNumber, type Int8 } from './rows.js';
import { statements, type Statement } from './statements.js';

interface PostgresSigningKeyRow {
  id: Int8;
  workspace_id: Int8;
  environment: Environment;
  kid: string;
  public_jwk: string;
  private_key_ciphertext: string;
  created_at: Date;
  retired_at: Date | null;
}

/** First half of the advisory lock key that serialises one issuer's key changes; "ugsk" in ASCII. */
const ISSUER_LOCK_CLASS = 0x7567736b;
const ISSUER = 'workspace_id = @workspaceId AND environment = @environment';

const sql = statements({
  // Rotations (and first keys) of one issuer in turn, so that concurrent ones cannot pass the
  // published-key bound together, nor find no current key to retire while another inserts one. The
  // second half of the key folds the workspace and environment into int4; a collision only serialises more.
  lockIssuer: `SELECT pg_advisory_xact_lock(${ISSUER_LOCK_CLASS},
    ((@workspaceId::bigint * 2 + (@environment::text = 'Testing')::int) % 2147483647)::int)`,
  // Two index ranges of signing_keys_published: the current key, and the keys retired since.
  published: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys
    WHERE ${ISSUER} AND (retired_at IS NULL OR retired_at > @retiredAfter::timestamptz) ORDER BY id DESC`,
  // The partial unique index allows one current key per issuer: a second first key inserts nothing.
  insert: `INSERT INTO signing_keys (workspace_id, environment, kid, public_jwk, private_key_ciphertext, created_at)
    VALUES (@workspaceId, @environment, @kid, @publicJwk, @privateKeyCiphertext, @createdAt)
    ON CONFLICT (workspace_id, environment) WHERE retired_at IS NULL DO NOTHING
    RETURNING ${SIGNING_KEY_COLUMNS}`,
  retire: `UPDATE signing_keys SET retired_at = @retiredAt WHERE ${ISSUER} AND retired_at IS NULL
    RETURNING ${SIGNING_KEY_COLUMNS}`,
  drop: 'DELETE FROM signing_keys WHERE id = ANY(@ids::bigint[])',
  lowSince: 'SELECT applied_at FROM schema_migrations WHERE version = @version',
});

// Every mint reads the current key and every verify one key by kid: kept prepared.
const hot = statements(
  {
    current: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE ${ISSUER} AND retired_at IS NULL`,
    byKid: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE kid = @kid AND ${ISSUER}`,
  },
  { prepared: true },
);

function toSigningKey(row: PostgresSigningKeyRow): SigningKeyRecord {
  return signingKeyFromRow({
    ...row,
    id: toNumber(row.id),
    workspace_id: toNumber(row.workspace_id),
    created_at: iso(row.created_at),
    retired_at: row.retired_at === null ? null : iso(row.retired_at),
  });
}

export function signingKeyMethods(db: PostgresDatabase, audit: AuditEvents): SigningKeyStore {
  const many = async (q: Queryable, statement: Statement) =>
    (await q.rows<PostgresSigningKeyRow>(statement)).map(toSigningKey);
  const one = async (q: Queryable, statement: Statement) => (await many(q, statement))[0] ?? null;
  const parameters = (key: NewSigningKey) => ({ ...key, publicJwk: JSON.stringify(key.publicJwk) });
  const issuerOf = (key: NewSigningKey) => ({ workspaceId: key.workspaceId, environment: key.environment });

  const insertFirst = audit.withAudit(async (tx, _context: AuditContext, key: NewSigningKey) => {
    await tx.rows(sql.lockIssuer(issuerOf(key)));
    const inserted = await one(tx, sql.insert(parameters(key)));
    if (inserted) return { result: inserted, entries: [signingKeyChanged(inserted, null)] };
    return { result: (await one(tx, hot.current(issuerOf(key))))!, entries: [] };
  });

  const rotate = audit.withAudit(
    async (
      tx: Queryable,
      _context: AuditContext,
      key: NewSigningKey,
      publishedSince: string,
      force: boolean,
    ): Promise<Audited<SigningKeyRotation>> => {
      await tx.rows(sql.lockIssuer(issuerOf(key)));
      // Read after the lock: each statement sees what the rotations before this one committed.
      const published = await many(tx, sql.published({ ...issuerOf(key), retiredAfter: publishedSince }));
      const plan = planSigningKeyRotation(published, force);
      if ('refused' in plan) {
        return { result: { status: 'limit_reached', published: plan.refused.published }, entries: [] };
      }
      if (plan.drop.length > 0) await tx.rows(sql.drop({ ids: plan.drop.map((dropped) => dropped.id) }));
      const retired = await one(tx, sql.retire({ ...issuerOf(key), retiredAt: key.createdAt }));
      const current = (await one(tx, sql.insert(parameters(key))))!;
      return {
        result: { status: 'rotated', current, retired, dropped: plan.drop },
        entries: [signingKeyChanged(current, retired, plan.drop)],
      };
    },
  );

  return {
    listSigningKeys: (issuer, retiredAfter) => many(db, sql.published({ ...issuer, retiredAfter })),
    findCurrentSigningKey: (issuer) => one(db, hot.current({ ...issuer })),
    findSigningKey: (issuer, kid) => one(db, hot.byKid({ ...issuer, kid })),
    insertFirstSigningKey: (key, context) => insertFirst(context, key),
    rotateSigningKey: (key, context, { publishedSince, force }) => rotate(context, key, publishedSince, force),
    lowSignaturesSince: async () => {
      const [row] = await db.rows<{ applied_at: Date }>(sql.lowSince({ version: LOW_S_MIGRATION_VERSION }));
      return iso(row!.applied_at);
    },
  };
}
