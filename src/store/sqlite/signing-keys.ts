import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { NewSigningKey } from '../../domain/signing-keys/signing-key.records.js';
import type { Audited } from '../../domain/audit/audit-entry.js';
import { signingKeyChanged } from '../../domain/catalog.rules.js';
import { planSigningKeyRotation } from '../../domain/signing-keys/signing-keys.rules.js';
import {
  LOW_S_MIGRATION_VERSION,
  SIGNING_KEY_COLUMNS,
  signingKeyFromRow,
  type SigningKeyRow,
} from '../signing-key-rows.js';
import type { SigningKeyRotation, SigningKeyStore } from '../../domain/signing-keys/signing-keys.port.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

const ISSUER = 'workspace_id = @workspaceId AND environment = @environment';

export function signingKeyMethods(db: Database, audit: AuditEvents): Synchronous<SigningKeyStore> {
  const sql = preparedOnFirstUse(db, {
    // Two index ranges of signing_keys_published: the current key, and the keys retired since.
    published: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys
      WHERE ${ISSUER} AND (retired_at IS NULL OR retired_at > @retiredAfter) ORDER BY id DESC`,
    current: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE ${ISSUER} AND retired_at IS NULL`,
    byKid: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE kid = @kid AND ${ISSUER}`,
    // The partial unique index allows one current key per issuer: a second first key inserts nothing.
    insert: `INSERT INTO signing_keys (workspace_id, environment, kid, public_jwk, private_key_ciphertext, created_at)
      VALUES (@workspaceId, @environment, @kid, @publicJwk, @privateKeyCiphertext, @createdAt)
      ON CONFLICT (workspace_id, environment) WHERE retired_at IS NULL DO NOTHING
      RETURNING ${SIGNING_KEY_COLUMNS}`,
    retire: `UPDATE signing_keys SET retired_at = @createdAt WHERE ${ISSUER} AND retired_at IS NULL
      RETURNING ${SIGNING_KEY_COLUMNS}`,
    drop: 'DELETE FROM signing_keys WHERE id = ?',
    lowSince: 'SELECT applied_at FROM schema_migrations WHERE version = ?',
  });

  const parameters = (key: NewSigningKey) => ({ ...key, publicJwk: JSON.stringify(key.publicJwk) });
  const row = (found: unknown) => (found === undefined ? null : signingKeyFromRow(found as SigningKeyRow));
  const issuerOf = (key: NewSigningKey) => ({ workspaceId: key.workspaceId, environment: key.environment });

  const insertFirst = audit.withAudit((_context: AuditContext, key: NewSigningKey) => {
    const inserted = row(sql.insert.get(parameters(key)));
    if (inserted) return { result: inserted, entries: [signingKeyChanged(inserted, null)] };
    return { result: row(sql.current.get(issuerOf(key)))!, entries: [] };
  });

  // BEGIN IMMEDIATE (withAudit) serialises rotations: the keys counted are the keys there are.
  const rotate = audit.withAudit(
    (
      _context: AuditContext,
      key: NewSigningKey,
      publishedSince: string,
      force: boolean,
    ): Audited<SigningKeyRotation> => {
      const published = (sql.published.all({ ...issuerOf(key), retiredAfter: publishedSince }) as SigningKeyRow[]).map(
        signingKeyFromRow,
      );
      const plan = planSigningKeyRotation(published, force);
      if ('refused' in plan) {
        return { result: { status: 'limit_reached', published: plan.refused.published }, entries: [] };
      }
      for (const dropped of plan.drop) sql.drop.run(dropped.id);
      const retired = row(sql.retire.get({ ...issuerOf(key), createdAt: key.createdAt }));
      const current = row(sql.insert.get(parameters(key)))!;
      return {
        result: { status: 'rotated', current, retired, dropped: plan.drop },
        entries: [signingKeyChanged(current, retired, plan.drop)],
      };
    },
  );

  return {
    listSigningKeys: (issuer, retiredAfter) =>
      (sql.published.all({ ...issuer, retiredAfter }) as SigningKeyRow[]).map(signingKeyFromRow),
    findCurrentSigningKey: (issuer) => row(sql.current.get(issuer)),
    findSigningKey: (issuer, kid) => row(sql.byKid.get({ ...issuer, kid })),
    insertFirstSigningKey: (key, context) => insertFirst(context, key),
    rotateSigningKey: (key, context, { publishedSince, force }) => rotate(context, key, publishedSince, force),
    lowSignaturesSince: () => sql.lowSince.pluck().get(LOW_S_MIGRATION_VERSION) as string,
  };
}
