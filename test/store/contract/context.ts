import type { Store } from '../../../src/store/store.js';
import type { Fixture } from '../store-fixtures.js';

/** Filled in by the contract's beforeEach: a migrated, seeded store per test. */
export interface ContractContext {
  store: Store;
  fx: Fixture;
}
