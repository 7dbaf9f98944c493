import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  CiphertextCount,
  CiphertextKind,
  CiphertextReplacement,
  StoredCiphertext,
} from '../../domain/encryption-keys/ciphertext.records.js';
import { encryptionKeyRotated } from '../../domain/catalog.rules.js';
import { CIPHERTEXT_COLUMNS, COUNT_BY_KEY, listNotUnderKey, lookupHashSet, perKind } from '../ciphertext-columns.js';
import type { CiphertextStore } from '../../domain/encryption-keys/ciphertexts.port.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

export function ciphertextMethods(db: Database, audit: AuditEvents): Synchronous<CiphertextStore> {
  const list = preparedOnFirstUse(db, perKind(listNotUnderKey));
  // Compare-and-swap on the ciphertext read: a row that moved on since is left as it is.
  const replaceOne = preparedOnFirstUse(
    db,
    perKind(
      (columns) =>
        `UPDATE ${columns.table} SET ${columns.column} = @replacement${lookupHashSet(columns, '@lookupHash')}
          WHERE ${columns.id} = @id AND ${columns.column} = @ciphertext`,
    ),
  );
  const sql = preparedOnFirstUse(db, { countByKey: COUNT_BY_KEY });

  const replace = db.transaction((replacements: CiphertextReplacement[]) =>
    replacements.reduce(
      (written, { kind, id, ciphertext, replacement, lookupHash }) =>
        written +
        replaceOne[kind].run({
          id,
          ciphertext,
          replacement,
          ...(CIPHERTEXT_COLUMNS[kind].lookupHash ? { lookupHash: lookupHash ?? null } : {}),
        }).changes,
      0,
    ),
  );

  const record = audit.withAudit((context: AuditContext, workspaceId: number) => ({
    result: undefined,
    entries: [encryptionKeyRotated(workspaceId, context.changes)],
  }));

  return {
    listCiphertextsNotUnderKey: (kind, keyId, afterId, limit) =>
      (list[kind].all({ keyId, afterId, limit }) as Array<Omit<StoredCiphertext, 'kind'>>).map((row) => ({
        kind,
        ...row,
      })),
    // IMMEDIATE takes the write lock up front, as every other write of this store does.
    replaceCiphertexts: (replacements) => replace.immediate(replacements),
    countCiphertextsByKey: () =>
      (sql.countByKey.all() as Array<{ kind: CiphertextKind; key_id: string; count: number }>).map(
        ({ kind, key_id, count }): CiphertextCount => ({ kind, keyId: key_id, count }),
      ),
    recordKeyRotation: (workspaceId, context) => record(context, workspaceId),
  };
}
