import { parseDatabaseUrl } from './config/database-url.js';
import { openKeyring, type KeyReload, type KeyringHandle } from './config/keyring-source.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { Workspace } from './domain/workspaces/workspace.records.js';
import { createServices, type Services } from './domain/services.js';
import {
  assertKeyIdsConfigured,
  MissingEncryptionKeysError,
  storedKeyIds,
} from './domain/encryption-keys/key-rotation.service.js';
import { createUsageRecorder, type UsageRecorder } from './domain/usage/usage-counter.js';
import { inspectBeforeOpening, openStore } from './store/open-store.js';
import type { Store } from './domain/store.port.js';
import { createAddressPolicy } from './webhooks/address-policy.js';

/** Where `ugs serve` listens by default; what commands that do not serve use as the public URL. */
export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

export interface Runtime {
  store: Store;
  services: Services;
  defaultWorkspace: Workspace;
  /** The encryption keys, where they come from, and (key file) their reload. */
  keys: KeyringHandle;
  /** The services' time. */
  clock: Clock;
  /** The service's public URL: the base of embed-token issuers and the OpenAPI document's server. */
  publicUrl: () => string;
  /** The usage counts of this process (docs/api.md#usage-per-group) when it counts them (`ugs serve`); else null. */
  usage: UsageRecorder | null;
  /** Writes the usage counts left (when counting), then closes the database. */
  close(): Promise<void>;
}

/**
 * The composition root shared by the server and every CLI command: opens the database, applies
 * migrations and makes sure workspace `default` exists, so any command works on an empty database.
 */
export async function openRuntime(options: {
  databaseUrl: string;
  encryptionKey: string | undefined;
  poolSize?: number;
  /** Told of every reload of the key file (SQLite without UGS_ENCRYPTION_KEY). */
  onKeyReload?: (event: KeyReload) => void;
  /** The services' time: the system clock unless given. */
  clock?: Clock;
  /**
   * Whether to refuse a database with ciphertexts under keys not configured (true unless given):
   * only `ugs keys list|rotate|prune`, which show and handle them, open such a database.
   */
  requireAllKeys?: boolean;
  /** The service's public URL, the base of embed-token issuers: `ugs serve` knows it; DEFAULT_PUBLIC_URL otherwise. */
  publicUrl?: () => string;
  /** Whether webhook URLs may be literal addresses outside global unicast, or localhost (false unless given). */
  allowPrivateWebhooks?: boolean;
  /** Told what an operator should know but that fails nothing: one line on stderr unless given. */
  warn?: (message: string) => void;
  /**
   * Count usage per group (docs/api.md#usage-per-group), written every `flushMs`; not counted unless given. Only a
   * serving process counts: a command's own operations are not usage.
   */
  usage?: { flushMs: number };
  /** How long an instance signs with the current key it read before reading it again: CURRENT_KEY_HELD_MS unless given (tests). */
  currentKeyHeldMs?: number;
}): Promise<Runtime> {
  const warn = options.warn ?? ((message: string) => process.stderr.write(`ugs: warning: ${message}\n`));
  const location = parseDatabaseUrl(options.databaseUrl);
  const requireAllKeys = options.requireAllKeys !== false;
  // A SQLite file that exists is read before anything is written beside it: with keys that cannot
  // open it, the start refuses with the folder as it was (no key file made, no migration applied).
  const existing = inspectBeforeOpening(location);
  const keys = openKeyring(location, options.encryptionKey, options.onKeyReload, { existingData: existing?.keyIds });
  let store: Store;
  try {
    if (existing && requireAllKeys) assertKeyIdsConfigured(existing.keyIds, keys.keyring.keyIds);
    store = openStore(location, { poolSize: options.poolSize });
  } catch (error) {
    keys.close();
    throw error;
  }
  const usage = options.usage
    ? createUsageRecorder({
        store,
        flushMs: options.usage.flushMs,
        warn: (message, error) => warn(`${message}: ${error instanceof Error ? error.message : String(error)}`),
      })
    : null;
  const close = async () => {
    // The counts left are written while the database is still open: a graceful stop loses none.
    await usage?.stop();
    keys.close();
    await store.close();
  };
  try {
    // PostgreSQL: the same check before migrating, where the schema already has the encrypted
    // columns (a new or older one is checked once migrated, below).
    // Each check reads every stored ciphertext's key id (docs/deployment.md#several-instances-postgresql): one that
    // answered makes the check after migrating redundant, migrations moving no ciphertext.
    let keysChecked = existing !== undefined;
    if (requireAllKeys && location.engine === 'postgres')
      keysChecked = await assertStoredKeysConfigured(store, keys.keyring.keyIds).then(
        () => true,
        (error: unknown) => {
          onlyMissingKeys(error);
          return false;
        },
      );
    // A migration may have created or rewritten tables: the planner gets their statistics now.
    if ((await store.migrate()) > 0) (await store.refreshStatistics()).forEach(warn);
    const clock = options.clock ?? systemClock;
    const publicUrl = options.publicUrl ?? (() => DEFAULT_PUBLIC_URL);
    const services = createServices({
      store,
      cipher: keys.keyring,
      clock,
      publicUrl,
      webhookAddresses: createAddressPolicy({ allowPrivate: options.allowPrivateWebhooks ?? false }),
      warn,
      ...(usage ? { usageCounter: usage } : {}),
      currentKeyHeldMs: options.currentKeyHeldMs,
    });
    if (requireAllKeys && !keysChecked) await services.keyRotation.assertKeysOpenAllData();
    const defaultWorkspace = await services.workspaces.ensureDefaultWorkspace({ type: 'cli' });
    return { store, services, defaultWorkspace, keys, clock, publicUrl, usage, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function assertStoredKeysConfigured(store: Store, configured: readonly string[]): Promise<void> {
  assertKeyIdsConfigured(storedKeyIds(await store.countCiphertextsByKey()), configured);
}

/** Before migrating, only a refusal counts: a query failing on a schema not there yet is no answer. */
function onlyMissingKeys(error: unknown): void {
  if (error instanceof MissingEncryptionKeysError) throw error;
}
