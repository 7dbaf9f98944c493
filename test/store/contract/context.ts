import type { Store } from '../../../src/domain/store.port.js';
import type { Fixture } from '../store-fixtures.js';

/** Filled in by the contract's beforeEach: a migrated, seeded store per test. */
export interface ContractContext {
  store: Store;
  fx: Fixture;
}
