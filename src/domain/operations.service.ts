import type { ConnectionStats, Store } from './store.port.js';

export type OperationsService = ReturnType<typeof createOperationsService>;

/** What an operator's probes and metrics ask of the process: whether the database answers, and the pool's figures. */
export function createOperationsService({ store }: { store: Pick<Store, 'ping' | 'connectionStats'> }) {
  return {
    /** Resolves when the database answers a trivial query; throws `unavailable` otherwise. */
    ready: (): Promise<void> => store.ping(),
    /** Connection pool figures; null for an engine without a pool. */
    connectionStats: (): ConnectionStats | null => store.connectionStats(),
  };
}
