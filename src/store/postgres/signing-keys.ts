import type { AuditContext, NewSigningKey, SigningKeyRecord } from '../../domain/models.js';
import { signingKeyChanged } from '../../domain/catalog.rules.js';
import { SIGNING_KEY_COLUMNS, signingKeyFromRow } from '../signing-key-rows.js';
import type { SigningKeyStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, toNumber, type Int8 } from './rows.js';
import { statements, type Statement } from './statements.js';

interface PostgresSigningKeyRow {
  id: Int8;
  workspace_id: Int8;
  kid: string;
  public_jwk: string;
  private_key_ciphertext: string;
  created_at: Date;
  retired_at: Date | null;
}

const sql = statements({
  list: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE workspace_id = @workspaceId ORDER BY id DESC`,
  current: `SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys WHERE workspace_id = @workspaceId AND retired_at IS NULL`,
  // The partial unique index allows one current key per workspace: a second first key inserts nothing
  // (ON CONFLICT waits for a concurrent insert to commit, so the read that follows finds the winner).
  insert: `INSERT INTO signing_keys (workspace_id, kid, public_jwk, private_key_ciphertext, created_at)
    VALUES (@workspaceId, @kid, @publicJwk, @privateKeyCiphertext, @createdAt)
    ON CONFLICT (workspace_id) WHERE retired_at IS NULL DO NOTHING
    RETURNING ${SIGNING_KEY_COLUMNS}`,
  // Every change of a workspace's keys takes this lock first, so that they run one after another: a
  // rotation that merely queued on the current key's row lock would find that key retired, and its
  // statement's snapshot would not show the key that replaced it (its own key then conflicted with
  // that one and was never made). NO KEY UPDATE leaves inserts that reference the workspace alone.
  lockWorkspace: 'SELECT id FROM workspaces WHERE id = @workspaceId FOR NO KEY UPDATE',
  retire: `UPDATE signing_keys SET retired_at = @retiredAt WHERE workspace_id = @workspaceId AND retired_at IS NULL
    RETURNING ${SIGNING_KEY_COLUMNS}`,
});

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
  const one = async (q: Queryable, statement: Statement) => {
    const [row] = await q.rows<PostgresSigningKeyRow>(statement);
    return row ? toSigningKey(row) : null;
  };
  const parameters = (key: NewSigningKey) => ({ ...key, publicJwk: JSON.stringify(key.publicJwk) });

  const insertFirst = audit.withAudit(async (tx, _context: AuditContext, key: NewSigningKey) => {
    await tx.rows(sql.lockWorkspace({ workspaceId: key.workspaceId }));
    const inserted = await one(tx, sql.insert(parameters(key)));
    if (inserted) return { result: inserted, entries: [signingKeyChanged(inserted, null)] };
    return { result: (await one(tx, sql.current({ workspaceId: key.workspaceId })))!, entries: [] };
  });

  const rotate = audit.withAudit(async (tx, _context: AuditContext, key: NewSigningKey) => {
    await tx.rows(sql.lockWorkspace({ workspaceId: key.workspaceId }));
    const retired = await one(tx, sql.retire({ workspaceId: key.workspaceId, retiredAt: key.createdAt }));
    const current = (await one(tx, sql.insert(parameters(key))))!;
    return { result: { current, retired }, entries: [signingKeyChanged(current, retired)] };
  });

  return {
    listSigningKeys: async (workspaceId) =>
      (await db.rows<PostgresSigningKeyRow>(sql.list({ workspaceId }))).map(toSigningKey),
    insertFirstSigningKey: (key, context) => insertFirst(context, key),
    rotateSigningKey: (key, context) => rotate(context, key),
  };
}
