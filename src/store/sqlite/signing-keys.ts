import type { Database } from 'better-sqlite3';
import type { AuditContext, NewSigningKey } from '../../domain/models.js';
import { signingKeyChanged } from '../../domain/catalog.rules.js';
import { SIGNING_KEY_COLUMNS, signingKeyFromRow, type SigningKeyRow } from '../signing-key-rows.js';
import type { SigningKeyStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

export function signingKeyMethods(db: Database, audit: AuditEvents): Synchronous<SigningKeyStore> {
  const sql = preparedOnFirstUse(db, {
    list: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE workspace_id = ? ORDER BY id DESC`,
    current: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE workspace_id = ? AND retired_at IS NULL`,
    // The partial unique index allows one current key per workspace: a second first key inserts nothing.
    insert: `INSERT INTO signing_keys (workspace_id, kid, public_jwk, private_key_ciphertext, created_at)
      VALUES (@workspaceId, @kid, @publicJwk, @privateKeyCiphertext, @createdAt)
      ON CONFLICT (workspace_id) WHERE retired_at IS NULL DO NOTHING
      RETURNING ${SIGNING_KEY_COLUMNS}`,
    retire: `UPDATE signing_keys SET retired_at = ? WHERE workspace_id = ? AND retired_at IS NULL RETURNING ${SIGNING_KEY_COLUMNS}`,
  });

  const parameters = (key: NewSigningKey) => ({ ...key, publicJwk: JSON.stringify(key.publicJwk) });
  const row = (found: unknown) => (found === undefined ? null : signingKeyFromRow(found as SigningKeyRow));

  const insertFirst = audit.withAudit((_context: AuditContext, key: NewSigningKey) => {
    const inserted = row(sql.insert.get(parameters(key)));
    if (inserted) return { result: inserted, entries: [signingKeyChanged(inserted, null)] };
    return { result: row(sql.current.get(key.workspaceId))!, entries: [] };
  });

  const rotate = audit.withAudit((_context: AuditContext, key: NewSigningKey) => {
    const retired = row(sql.retire.get(key.createdAt, key.workspaceId));
    const current = row(sql.insert.get(parameters(key)))!;
    return { result: { current, retired }, entries: [signingKeyChanged(current, retired)] };
  });

  return {
    listSigningKeys: (workspaceId) => (sql.list.all(workspaceId) as SigningKeyRow[]).map(signingKeyFromRow),
    insertFirstSigningKey: (key, context) => insertFirst(context, key),
    rotateSigningKey: (key, context) => rotate(context, key),
  };
}
