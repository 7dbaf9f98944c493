import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { readKeyFile, writeKeyFile } from '../config/encryption-key.js';
import { withKeyFileLock } from '../config/key-file-lock.js';
import { KEY_FILE_PICKUP_MS } from '../config/keyring-source.js';
import {
  totalOf,
  type CiphertextCounts,
  type KeyUsage,
  type ReEncryptionOptions,
  type ReEncryptionSummary,
} from '../domain/encryption-keys/key-rotation.service.js';
import { CIPHERTEXT_KINDS, type CiphertextKind } from '../domain/encryption-keys/ciphertext.records.js';
import { encryptionKeyId, generateEncryptionKey } from '../domain/secrets.js';
import type { Runtime } from '../runtime.js';
import { jsonOption, printJson, printRows, subcommand, withRuntime, type CommonOptions } from './context.js';

/** How each kind of ciphertext is named in the output. */
const KIND_COLUMNS: Record<CiphertextKind, string> = {
  user_group_token: 'user_group_tokens',
  idempotent_response: 'idempotent_responses',
  signing_key: 'signing_keys',
  webhook_secret: 'webhook_secrets',
  webhook_previous_secret: 'webhook_previous_secrets',
};

const countColumns = (counts: CiphertextCounts) =>
  Object.fromEntries(CIPHERTEXT_KINDS.map((kind) => [KIND_COLUMNS[kind], counts[kind]]));

const describeUsage = (key: KeyUsage) => ({
  key_id: key.keyId,
  current: key.current,
  configured: key.configured,
  ...countColumns(key.ciphertexts),
});

/** `a1b2c3d4 (3 tokens, not configured)` for messages. */
const describeLeft = (key: KeyUsage) => {
  const count = totalOf(key.ciphertexts);
  return `${key.keyId} (${count} token${count === 1 ? '' : 's'}${key.configured ? '' : ', not configured'})`;
};

/**
 * list, rotate and prune open a database whose ciphertexts name keys this process lacks (every other
 * command refuses it): they are how an operator finds which key is missing, moves what can be read,
 * and reports what cannot.
 */
export function keysCommand(): Command {
  const keys = new Command('keys').description('manage the keys that encrypt user group tokens at rest');

  keys
    .command('generate')
    .description('print a new random key (base64) for UGS_ENCRYPTION_KEY; changes nothing')
    .addOption(jsonOption())
    .action((options: { json?: boolean }) => {
      const key = generateEncryptionKey();
      if (options.json) printJson({ key: key.toString('base64'), key_id: encryptionKeyId(key) });
      else process.stdout.write(`${key.toString('base64')}\n`);
    });

  subcommand(keys, 'list', 'list the keys, which one encrypts, and how many tokens each one encrypts', {
    workspace: false,
  }).action(async (options: Omit<CommonOptions, 'workspace'>) => {
    await withRuntime({ ...options, requireAllKeys: false }, async (runtime) => {
      printRows((await runtime.services.keyRotation.keyUsage()).map(describeUsage), options.json);
    });
  });

  subcommand(
    keys,
    'rotate',
    're-encrypt every token under a new key (key file) or the first key of UGS_ENCRYPTION_KEY',
  ).action(async (options: CommonOptions) => {
    await withRuntime({ ...options, requireAllKeys: false }, async (runtime) => {
      // The run's audit event goes to this workspace; checked before the key file changes.
      const { id: workspaceId } = await runtime.services.workspaces.requireWorkspace(options.workspace);
      const { source } = runtime.keys;
      const summary =
        source.kind === 'file'
          ? await withKeyFileLock(source.path, () => rotateKeyFile(runtime, source.path, workspaceId))
          : await reEncrypt(runtime, workspaceId, { keyGenerated: false });
      printRotation(summary, source.kind === 'file', options.json);
    });
  });

  subcommand(keys, 'prune', 'remove from the key file the keys no token is encrypted under any more', {
    workspace: false,
  }).action(async (options: Omit<CommonOptions, 'workspace'>) => {
    await withRuntime({ ...options, requireAllKeys: false }, async (runtime) => {
      const { source } = runtime.keys;
      if (source.kind === 'file')
        await withKeyFileLock(source.path, () => pruneKeyFile(runtime, source.path, options.json));
      else await reportPrunableKeys(runtime, options.json);
    });
  });

  return keys;
}

function reEncrypt(
  runtime: Runtime,
  workspaceId: number,
  options: Omit<ReEncryptionOptions, 'audit'>,
): Promise<ReEncryptionSummary> {
  return runtime.services.keyRotation.reEncrypt({ audit: { workspaceId, actor: { type: 'cli' } }, ...options });
}

/**
 * A new key goes first in the key file, the old ones stay after it (everything stays readable),
 * then every token is re-encrypted. Servers on the file switch within KEY_FILE_POLL_MS; the final
 * sweep waits for that, so it also catches what they wrote under the old key until then.
 */
async function rotateKeyFile(runtime: Runtime, path: string, workspaceId: number): Promise<ReEncryptionSummary> {
  const key = generateEncryptionKey();
  writeKeyFile(path, [key, ...readKeyFile(path)]);
  const writtenAt = Date.now();
  runtime.keys.reload();
  if (runtime.keys.keyring.keyId !== encryptionKeyId(key))
    throw new Error(`${path} changed while the new key was being written; run ugs keys rotate again.`);
  process.stderr.write(
    `new key ${encryptionKeyId(key)} is first in ${path}; the old keys stay for reading until ugs keys prune\n`,
  );
  return reEncrypt(runtime, workspaceId, {
    keyGenerated: true,
    beforeFinalSweep: () => sleep(Math.max(0, writtenAt + KEY_FILE_PICKUP_MS - Date.now())),
  });
}

function printRotation(summary: ReEncryptionSummary, keyGenerated: boolean, json: boolean | undefined): void {
  if (json) {
    printJson({
      key_id: summary.keyId,
      key_generated: keyGenerated,
      re_encrypted: countColumns(summary.reEncrypted),
      passes: summary.passes,
      remaining: summary.remaining.map(describeUsage),
    });
  } else {
    const done = `re-encrypted ${totalOf(summary.reEncrypted)} tokens`;
    process.stdout.write(
      summary.remaining.length === 0
        ? `${done}; all tokens are under key ${summary.keyId}\n`
        : `${done}; still under other keys than ${summary.keyId}: ${summary.remaining.map(describeLeft).join(', ')}\n`,
    );
  }
  if (summary.remaining.length > 0) {
    const unknown = summary.remaining.some((key) => !key.configured);
    process.stderr.write(
      unknown
        ? 'Some tokens are under keys that are not configured: add those keys (after the current one) and run ugs keys rotate again.\n'
        : 'Tokens are left under an old key: a server still encrypts with it (give every server the current key first), or they could not be decrypted. Run ugs keys rotate again; ugs keys list shows what is left.\n',
    );
    process.exitCode = 2;
  }
}

function refuseWhileUsed(stillUsed: KeyUsage[]): Error {
  return new Error(
    `Tokens are still encrypted under ${stillUsed.map(describeLeft).join(', ')}: run ugs keys rotate first. Nothing was removed.`,
  );
}

/**
 * Keeps the current key and drops the others once nothing is stored under them. Then it counts
 * again: a server that had not switched keys yet may have written under a dropped key meanwhile,
 * and then the old file comes back (a server that reloaded in between re-reads it on its own).
 */
async function pruneKeyFile(runtime: Runtime, path: string, json: boolean | undefined): Promise<void> {
  runtime.keys.reload();
  const { removable, stillUsed } = await runtime.services.keyRotation.prunePlan();
  if (stillUsed.length > 0) throw refuseWhileUsed(stillUsed);
  const keys = readKeyFile(path);
  const kept = keys.filter((key) => !removable.includes(encryptionKeyId(key)));
  if (kept.length < keys.length) {
    writeKeyFile(path, kept);
    runtime.keys.reload();
    const usedAgain = (await runtime.services.keyRotation.keyUsage()).filter(
      (key) => removable.includes(key.keyId) && totalOf(key.ciphertexts) > 0,
    );
    if (usedAgain.length > 0) {
      writeKeyFile(path, keys);
      runtime.keys.reload();
      throw refuseWhileUsed(usedAgain);
    }
  }
  const keptIds = kept.map(encryptionKeyId);
  if (json) printJson({ removed: removable, kept: keptIds });
  else if (removable.length === 0)
    process.stdout.write(`nothing to prune: ${path} holds only key ${keptIds.join(', ')}\n`);
  else process.stdout.write(`removed key ${removable.join(', ')} from ${path}; it holds key ${keptIds.join(', ')}\n`);
}

/** Keys from UGS_ENCRYPTION_KEY are the operator's to remove: this says which ones can go. */
async function reportPrunableKeys(runtime: Runtime, json: boolean | undefined): Promise<void> {
  const { removable, stillUsed } = await runtime.services.keyRotation.prunePlan();
  if (json) printJson({ removable, still_used: stillUsed.map(describeUsage) });
  else {
    process.stdout.write(
      'UGS_ENCRYPTION_KEY is set: remove keys from it on every instance yourself (rolling restart).\n',
    );
    process.stdout.write(
      removable.length > 0
        ? `no token is under key ${removable.join(', ')}: it can be removed\n`
        : 'no key can be removed\n',
    );
    if (stillUsed.length > 0)
      process.stdout.write(`still in use: ${stillUsed.map(describeLeft).join(', ')}: run ugs keys rotate first\n`);
  }
  if (stillUsed.length > 0) process.exitCode = 1;
}
