import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { parseDatabaseUrl, type DatabaseLocation } from '../config/database-url.js';
import { keyFilePath, loadEncryptionKeys } from '../config/encryption-key.js';
import { encryptionKeyId } from '../domain/secrets.js';
import { assertKeyIdsConfigured, type StoredKeyId } from '../domain/encryption-keys/key-rotation.service.js';
import { backupSqlite, inspectBackup, restoreSqlite } from '../store/sqlite/sqlite-backup.js';
import { databaseOption, jsonOption, printJson } from './context.js';

/** On PostgreSQL the commands do nothing but say what to use (docs/deployment.md gives the procedure). */
function sqliteOnly(
  location: DatabaseLocation,
  command: 'backup' | 'restore',
): Extract<DatabaseLocation, { engine: 'sqlite' }> {
  if (location.engine === 'sqlite') return location;
  const tool =
    command === 'backup'
      ? 'pg_dump --format=custom --file ugs.dump <database>'
      : 'pg_restore --clean --if-exists --dbname <database> ugs.dump, into a stopped deployment';
  throw new Error(
    `ugs ${command} works on SQLite only; nothing was done. On PostgreSQL use ${tool}, and keep UGS_ENCRYPTION_KEY apart from the dump: the dump cannot be read without it (docs/deployment.md, "Backups and restore").`,
  );
}

const keyList = (keyIds: readonly StoredKeyId[]) =>
  keyIds.length === 0 ? 'none (it holds no encrypted data)' : keyIds.map((key) => key.keyId).join(', ');

export function backupCommand(): Command {
  return new Command('backup')
    .description('copy a running SQLite database consistently into a new file (0600); the keys stay apart')
    .argument('<file>', 'the backup file to create (never overwritten)')
    .addOption(jsonOption())
    .addOption(databaseOption())
    .action((file: string, options: { json?: boolean; database: string }) => {
      const location = sqliteOnly(parseDatabaseUrl(options.database), 'backup');
      const copy = backupSqlite(location.path, file);
      if (options.json) {
        printJson({
          file,
          bytes: copy.bytes,
          schema_version: copy.schemaVersion,
          integrity: 'ok',
          key_ids: copy.keyIds.map((key) => key.keyId),
        });
        return;
      }
      process.stdout.write(
        [
          `backed up ${location.path} to ${file} (${copy.bytes} bytes, schema version ${copy.schemaVersion}, integrity ok)`,
          `it needs the encryption keys ${keyList(copy.keyIds)}, which are not in it: keep ${process.env.UGS_ENCRYPTION_KEY ? 'UGS_ENCRYPTION_KEY' : keyFilePath(location.path)} safe, apart from the backup`,
          '',
        ].join('\n'),
      );
    });
}

export function restoreCommand(): Command {
  return new Command('restore')
    .description('put a backup made by `ugs backup` in place of the SQLite database of a stopped deployment')
    .argument('<file>', 'the backup file (left as it is)')
    .addOption(jsonOption())
    .addOption(databaseOption())
    .action((file: string, options: { json?: boolean; database: string }) => {
      const location = sqliteOnly(parseDatabaseUrl(options.database), 'restore');
      // Everything is checked before anything is written: the backup whole, then its keys at hand.
      const backup = inspectBackup(file);
      const configured = process.env.UGS_ENCRYPTION_KEY;
      const keyFile = keyFilePath(location.path);
      if ((configured === undefined || configured === '') && !existsSync(keyFile))
        throw new Error(
          `The backup needs the encryption keys ${keyList(backup.keyIds)}: put the key file they are in at ${keyFile} first (keys are kept apart from backups), or set UGS_ENCRYPTION_KEY. Nothing was changed.`,
        );
      const { keys } = loadEncryptionKeys(location, configured, { existingData: backup.keyIds });
      const keyIds = keys.map(encryptionKeyId);
      try {
        assertKeyIdsConfigured(backup.keyIds, keyIds);
      } catch (error) {
        throw new Error(`${(error as Error).message} Nothing was changed.`);
      }
      restoreSqlite(file, location.path);
      if (options.json) {
        printJson({ file, database: location.path, schema_version: backup.schemaVersion, key_ids: keyIds });
        return;
      }
      process.stdout.write(
        `restored ${file} to ${location.path} (schema version ${backup.schemaVersion}; its keys ${keyList(backup.keyIds)} are configured); start the server\n`,
      );
    });
}
