import { parseDatabaseUrl } from './config/database-url.js';
import { loadEncryptionKey } from './config/encryption-key.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { Workspace } from './domain/models.js';
import { createTokenCipher } from './domain/secrets.js';
import { createServices, type Services } from './domain/services.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

export interface Runtime {
  store: Store;
  services: Services;
  defaultWorkspace: Workspace;
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
  /** The services' time: the system clock unless given. */
  clock?: Clock;
}): Promise<Runtime> {
  const location = parseDatabaseUrl(options.databaseUrl);
  const cipher = createTokenCipher(loadEncryptionKey(location, options.encryptionKey));
  const store = openStore(location, { poolSize: options.poolSize });
  try {
    await store.migrate();
    const services = createServices({ store, cipher, clock: options.clock ?? systemClock });
    const defaultWorkspace = await services.workspaces.ensureDefaultWorkspace({ type: 'cli' });
    return { store, services, defaultWorkspace, close: () => store.close() };
  } catch (error) {
    await store.close();
    throw error;
  }
}
