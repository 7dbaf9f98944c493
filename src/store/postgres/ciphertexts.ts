import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { CiphertextKind } from '../../domain/encryption-keys/ciphertext.records.js';
import { encryptionKeyRotated } from '../../domain/catalog.rules.js';
import { COUNT_BY_KEY, listNotUnderKey, lookupHashSet, perKind } from '../ciphertext-columns.js';
import type { CiphertextStore } from '../../domain/encryption-keys/ciphertexts.port.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase } from './postgres-database.js';
import { toNumber, type Int8 } from './rows.js';
import { statement, statements, type Statement } from './statements.js';
import type { QueryResultRow } from 'pg';

const list = statements(perKind(listNotUnderKey));

// A whole batch of one kind in one statement. Compare-and-swap on the ciphertext read: under READ
// COMMITTED a row another transaction changed meanwhile is re-checked after that one commits, and
// left alone when its ciphertext moved on.
const replace = statements(
  perKind(
    (
      columns,
    ) => `UPDATE ${columns.table} t SET ${columns.column} = r.replacement${lookupHashSet(columns, 'r.lookup_hash')}
      FROM unnest(@ids::bigint[], @ciphertexts::text[], @replacements::text[], @lookupHashes::text[])
        AS r(id, ciphertext, replacement, lookup_hash)
      WHERE t.${columns.id} = r.id AND t.${columns.column} = r.ciphertext
      RETURNING t.${columns.id}`,
  ),
);

const countByKey = statement(COUNT_BY_KEY);

/**
 * The statement timeout of a walk over every stored ciphertext (the key census at start and in `ugs
 * keys`, re-encryption's search for rows under another key): its cost grows with the groups stored, not
 * with one request, so the pool's 5 s would refuse a start at some size (10 000 000 groups read for about
 * 10 s here). Long enough for hundreds of millions of rows; still a bound, for a database gone silent.
 */
export const CIPHERTEXT_SCAN_TIMEOUT_MS = 600_000;

export function ciphertextMethods(db: PostgresDatabase, audit: AuditEvents): CiphertextStore {
  const record = audit.withAudit(async (_tx, context: AuditContext, workspaceId: number) => ({
    result: undefined,
    entries: [encryptionKeyRotated(workspaceId, context.changes)],
  }));

  /** A walk over stored ciphertexts, under its own statement timeout. */
  const scan = <R extends QueryResultRow>(walk: Statement) =>
    db.transaction((tx) => tx.rows<R>(walk), { statementTimeoutMs: CIPHERTEXT_SCAN_TIMEOUT_MS });

  return {
    async listCiphertextsNotUnderKey(kind, keyId, afterId, limit) {
      const rows = await scan<{ id: Int8; ciphertext: string }>(list[kind]({ keyId, afterId, limit }));
      return rows.map((row) => ({ kind, id: toNumber(row.id), ciphertext: row.ciphertext }));
    },

    replaceCiphertexts: (replacements) =>
      db.transaction(async (tx) => {
        let written = 0;
        for (const kind of new Set(replacements.map((replacement) => replacement.kind))) {
          const ofKind = replacements.filter((replacement) => replacement.kind === kind);
          const rows = await tx.rows(
            replace[kind]({
              ids: ofKind.map((replacement) => replacement.id),
              ciphertexts: ofKind.map((replacement) => replacement.ciphertext),
              replacements: ofKind.map((replacement) => replacement.replacement),
              lookupHashes: ofKind.map((replacement) => replacement.lookupHash ?? null),
            }),
          );
          written += rows.length;
        }
        return written;
      }),

    async countCiphertextsByKey() {
      const rows = await scan<{ kind: CiphertextKind; key_id: string; count: Int8 }>(countByKey());
      return rows.map((row) => ({ kind: row.kind, keyId: row.key_id, count: toNumber(row.count) }));
    },

    recordKeyRotation: (workspaceId, context) => record(context, workspaceId),
  };
}
