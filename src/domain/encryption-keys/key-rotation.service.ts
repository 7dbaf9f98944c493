import { isHostedTokenShaped, storedTokenHash } from '../secrets.js';
import { auditContextOf } from '../audit/audit-context.js';
import type { Clock } from '../clock.js';
import type { Keyring } from './keyring.js';
import {
  CIPHERTEXT_KINDS,
  type CiphertextKind,
  type CiphertextReplacement,
  type StoredCiphertext,
} from './ciphertext.records.js';
import type { Actor } from '../tenancy.js';
import type { CiphertextStore } from './ciphertexts.port.js';

/** Rows re-encrypted per transaction: short enough that a server's writes hardly wait for the lock. */
export const RE_ENCRYPTION_BATCH_SIZE = 500;

/**
 * Passes over the data before giving up on reaching a quiet one. Each pass after the first only
 * meets rows written under an old key meanwhile, by a process that has not switched keys yet.
 */
const MAX_PASSES = 10;

export type CiphertextCounts = Record<CiphertextKind, number>;

/** One key id: whether the keyring holds it and uses it to encrypt, and what is stored under it. */
export interface KeyUsage {
  keyId: string;
  current: boolean;
  /** False for a key id found only in stored ciphertexts: those cannot be decrypted. */
  configured: boolean;
  ciphertexts: CiphertextCounts;
}

export interface ReEncryptionSummary {
  /** The current key, which everything was re-encrypted under. */
  keyId: string;
  reEncrypted: CiphertextCounts;
  passes: number;
  /** Key ids other than the current one that still encrypt something after the run; empty on success. */
  remaining: KeyUsage[];
}

export interface ReEncryptionOptions {
  /** The workspace and actor of the run's audit event. */
  audit: { workspaceId: number; actor: Actor };
  /** The run put a new key in place (the key file): audited even when there was nothing to re-encrypt. */
  keyGenerated: boolean;
  /**
   * Awaited once the data looks done, before one more sweep: lets processes that have not switched
   * to the current key yet do so, so that their last old-key writes are caught too.
   */
  beforeFinalSweep?: () => Promise<void>;
}

const noCounts = (): CiphertextCounts =>
  Object.fromEntries(CIPHERTEXT_KINDS.map((kind) => [kind, 0])) as CiphertextCounts;

export const totalOf = (counts: CiphertextCounts): number =>
  Object.values(counts).reduce((sum, count) => sum + count, 0);

export type KeyRotationService = ReturnType<typeof createKeyRotationService>;

/** Keys missing for data the database holds: a configuration error that stops a process before it serves. */
export class MissingEncryptionKeysError extends Error {
  override readonly name = 'MissingEncryptionKeysError';
}

/** How many ciphertexts a key id encrypts (the key id taken from the ciphertexts themselves). */
export interface StoredKeyId {
  keyId: string;
  count: number;
}

/** Adds up counts of one key id over the kinds of ciphertext. */
export function storedKeyIds(counts: ReadonlyArray<{ keyId: string; count: number }>): StoredKeyId[] {
  const total = new Map<string, number>();
  for (const { keyId, count } of counts) total.set(keyId, (total.get(keyId) ?? 0) + count);
  return [...total].filter(([, count]) => count > 0).map(([keyId, count]) => ({ keyId, count }));
}

/**
 * Refuses (docs/deployment.md#one-machine-sqlite) data under keys the process does not have: it could only answer 500 for them.
 * Names both sides, so the operator knows which key to bring.
 */
export function assertKeyIdsConfigured(stored: readonly StoredKeyId[], configured: readonly string[]): void {
  const missing = stored.filter((key) => key.count > 0 && !configured.includes(key.keyId));
  if (missing.length === 0) return;
  const found = missing.map((key) => `${key.keyId} (${key.count} ciphertexts)`).join(', ');
  throw new MissingEncryptionKeysError(
    `The database holds tokens encrypted under key ${found}, which the configured keys (${configured.join(', ') || 'none'}) do not include. ` +
      'Start with the keys the database was written with (UGS_ENCRYPTION_KEY, or the key file beside a SQLite database); `ugs keys list` shows every key id in use.',
  );
}

/**
 * Moves every stored ciphertext under the keyring's current key. Rows are read in batches and
 * written back with a compare-and-swap on the ciphertext read, so a concurrent change (a token
 * rotated, a group deleted) always wins, and whatever still needs it is picked up by the next pass.
 */
export function createKeyRotationService({
  store,
  keyring,
  clock,
}: {
  store: CiphertextStore;
  keyring: Keyring;
  clock: Clock;
}) {
  /** Every key the keyring holds (current first), then any other key id found in the data. */
  async function keyUsage(): Promise<KeyUsage[]> {
    const usage = new Map<string, KeyUsage>();
    const entry = (keyId: string): KeyUsage => {
      let found = usage.get(keyId);
      if (!found) {
        found = {
          keyId,
          current: keyId === keyring.keyId,
          configured: keyring.keyIds.includes(keyId),
          ciphertexts: noCounts(),
        };
        usage.set(keyId, found);
      }
      return found;
    };
    keyring.keyIds.forEach(entry);
    for (const { kind, keyId, count } of await store.countCiphertextsByKey()) entry(keyId).ciphertexts[kind] += count;
    return [...usage.values()];
  }

  /** The re-encrypted row, or nothing when the keyring cannot open it (an unknown key): it stays, and is reported. */
  const reEncrypted = (row: StoredCiphertext): CiphertextReplacement[] => {
    let plaintext: string;
    try {
      plaintext = keyring.decrypt(row.ciphertext);
    } catch {
      return [];
    }
    // A hosted group token is found by a keyed hash under the key of its ciphertext: both move together.
    const rehash = row.kind === 'user_group_token' && isHostedTokenShaped(plaintext);
    return [
      {
        ...row,
        replacement: keyring.encrypt(plaintext),
        ...(rehash ? { lookupHash: storedTokenHash(plaintext, keyring) } : {}),
      },
    ];
  };

  /** One walk over every kind; `moved` counts rows that changed between read and write. */
  async function sweep(): Promise<{ written: CiphertextCounts; moved: number }> {
    const written = noCounts();
    let moved = 0;
    const keyId = keyring.keyId;
    for (const kind of CIPHERTEXT_KINDS) {
      for (let afterId = 0; ;) {
        const batch = await store.listCiphertextsNotUnderKey(kind, keyId, afterId, RE_ENCRYPTION_BATCH_SIZE);
        const replacements = batch.flatMap(reEncrypted);
        const count = replacements.length === 0 ? 0 : await store.replaceCiphertexts(replacements);
        written[kind] += count;
        moved += replacements.length - count;
        const last = batch.at(-1);
        if (batch.length < RE_ENCRYPTION_BATCH_SIZE || !last) break;
        afterId = last.id;
      }
    }
    return { written, moved };
  }

  /** Sweeps until one finds nothing left to do (or MAX_PASSES); adds to `total` and returns the passes. */
  async function sweepUntilQuiet(total: CiphertextCounts): Promise<number> {
    for (let passes = 1; ; passes++) {
      const { written, moved } = await sweep();
      for (const kind of CIPHERTEXT_KINDS) total[kind] += written[kind];
      if ((totalOf(written) === 0 && moved === 0) || passes >= MAX_PASSES) return passes;
    }
  }

  const inUse = (usage: KeyUsage[]): string[] =>
    usage.filter((key) => totalOf(key.ciphertexts) > 0).map((key) => key.keyId);

  return {
    keyUsage,

    /** Refuses to go on when the database holds ciphertexts under keys this process does not have. */
    async assertKeysOpenAllData(): Promise<void> {
      const usage = await keyUsage();
      assertKeyIdsConfigured(
        usage.map((key) => ({ keyId: key.keyId, count: totalOf(key.ciphertexts) })),
        keyring.keyIds,
      );
    },

    async reEncrypt({ audit, keyGenerated, beforeFinalSweep }: ReEncryptionOptions): Promise<ReEncryptionSummary> {
      const before = await keyUsage();
      const total = noCounts();
      let passes = await sweepUntilQuiet(total);
      if (beforeFinalSweep) {
        await beforeFinalSweep();
        passes += await sweepUntilQuiet(total);
      }
      const after = await keyUsage();
      // Re-encryption changes no group; one event records the run itself, only when it changed something.
      if (keyGenerated || totalOf(total) > 0) {
        const changes = { key_ids_in_use: { before: inUse(before), after: inUse(after) } };
        await store.recordKeyRotation(
          audit.workspaceId,
          auditContextOf(clock, { actor: audit.actor, requestId: null }, changes),
        );
      }
      const remaining = after.filter((key) => !key.current && totalOf(key.ciphertexts) > 0);
      return { keyId: keyring.keyId, reEncrypted: total, passes, remaining };
    },

    /** Which keys other than the current one could go: those nothing is stored under any more. */
    async prunePlan(): Promise<{ removable: string[]; stillUsed: KeyUsage[] }> {
      const others = (await keyUsage()).filter((key) => key.configured && !key.current);
      return {
        removable: others.filter((key) => totalOf(key.ciphertexts) === 0).map((key) => key.keyId),
        stillUsed: others.filter((key) => totalOf(key.ciphertexts) > 0),
      };
    },
  };
}
