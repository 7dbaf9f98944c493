import { afterAll, afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../src/domain/store.port.js';
import { describeApiTokenContract } from './contract/api-tokens.contract.js';
import { describeAuditContract } from './contract/audit.contract.js';
import { describeCatalogContract } from './contract/catalog.contract.js';
import { describeCiphertextContract } from './contract/ciphertexts.contract.js';
import { describeConsoleSessionContract } from './contract/console-sessions.contract.js';
import { describeOidcSessionContract } from './contract/oidc-sessions.contract.js';
import type { ContractContext } from './contract/context.js';
import { describeIdempotencyKeyContract } from './contract/idempotency-keys.contract.js';
import { describeConsumedEmbedTokenContract } from './contract/consumed-embed-tokens.contract.js';
import { describeStoreLifecycleContract } from './contract/store-lifecycle.contract.js';
import { describeUserGroupLookupContract } from './contract/user-group-lookups.contract.js';
import { describeSigningKeyChangeContract } from './contract/signing-key-changes.contract.js';
import { describeSigningKeyContract } from './contract/signing-keys.contract.js';
import { describeWebhookEndpointContract } from './contract/webhook-endpoints.contract.js';
import { describeWebhookDeliveryContract } from './contract/webhook-deliveries.contract.js';
import { describeWebhookOutboxContract } from './contract/webhook-outbox.contract.js';
import { describeUserGroupBatchContract } from './contract/user-group-batch.contract.js';
import { describeUserGroupQueryContract } from './contract/user-group-queries.contract.js';
import { describeUserGroupContract } from './contract/user-groups.contract.js';
import { describeUserGroupTreeContract } from './contract/user-group-tree.contract.js';
import { describeUserGroupSyncContract } from './contract/user-group-sync.contract.js';
import { describeWorkspaceContract } from './contract/workspaces.contract.js';
import { describeUsageContract } from './contract/usage.contract.js';
import { describeEmbedTokenRevocationContract } from './contract/embed-token-revocations.contract.js';
import { seed, type Fixture } from './store-fixtures.js';

export interface OpenedStore {
  store: Store;
  cleanup: () => Promise<void>;
}

/**
 * An engine that can copy a database: the contract migrates and seeds one database once per file and
 * each test opens a copy of it, instead of migrating and seeding its own (most of a test's time on
 * SQLite). `create` hands back an empty, not yet migrated database, closed again once seeded; `copy`
 * a store on a new copy of that database as it was then.
 */
export interface StoreTemplate {
  create(): Promise<OpenedStore>;
  copy(): Promise<OpenedStore>;
}

/**
 * The behaviour every Store engine must show, written against the interface alone so that each engine
 * runs the same suite. `openStore` must hand back an empty, not yet migrated database per call.
 */
export function describeStoreContract(
  engineName: string,
  openStore: () => Promise<OpenedStore>,
  template?: StoreTemplate,
): void {
  describe(`Store contract (${engineName})`, () => {
    const context = {} as ContractContext;
    let cleanup: (() => Promise<void>) | undefined;
    let seeded: Promise<{ fx: Fixture; cleanup: () => Promise<void> }> | undefined;

    const seedTemplate = async (made: StoreTemplate) => {
      const opened = await made.create();
      await opened.store.migrate();
      const fx = await seed(opened.store);
      await opened.store.close();
      return { fx, cleanup: opened.cleanup };
    };

    beforeEach(async () => {
      if (template) {
        seeded ??= seedTemplate(template);
        const { fx } = await seeded;
        const opened = await template.copy();
        cleanup = opened.cleanup;
        context.store = opened.store;
        // Migrating a migrated copy changes nothing; every test's store is still one that migrate() ran on.
        await context.store.migrate();
        // A copy per test: a test may change the objects it was handed.
        context.fx = structuredClone(fx);
        return;
      }
      const opened = await openStore();
      cleanup = opened.cleanup;
      context.store = opened.store;
      await context.store.migrate();
      context.fx = await seed(context.store);
    });

    afterEach(async () => {
      await context.store.close();
      await cleanup?.();
    });

    afterAll(async () => {
      const made = seeded;
      seeded = undefined;
      if (made) await (await made).cleanup();
    });

    describeWorkspaceContract(context);
    describeApiTokenContract(context);
    describeCatalogContract(context);
    describeUserGroupContract(context);
    describeUserGroupTreeContract(context);
    describeUserGroupQueryContract(context);
    describeUserGroupBatchContract(context);
    describeUserGroupSyncContract(context);
    describeEmbedTokenRevocationContract(context);
    describeAuditContract(context);
    describeCiphertextContract(context);
    describeIdempotencyKeyContract(context);
    describeConsumedEmbedTokenContract(context);
    describeConsoleSessionContract(context);
    describeOidcSessionContract(context);
    describeUserGroupLookupContract(context);
    describeSigningKeyContract(context);
    describeSigningKeyChangeContract(context);
    describeWebhookEndpointContract(context);
    describeWebhookOutboxContract(context);
    describeWebhookDeliveryContract(context);
    describeUsageContract(context);
    describeStoreLifecycleContract(context);
  });
}
