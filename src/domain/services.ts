import { createApiTokenService } from './api-tokens/api-tokens.service.js';
import { admittedOnEntry } from './api-tokens/api-token-admission.js';
import { createAuditService } from './audit/audit.service.js';
import type { Clock } from './clock.js';
import { createConsoleSessionService } from './console-sessions/console-sessions.service.js';
import { createOidcSignInService, createPersonSessionAdmin } from './console-sessions/oidc-sign-in.service.js';
import type { OidcSettings } from '../config/oidc-settings.js';
import { createDataSourceService } from './data-sources/data-sources.service.js';
import { createEmbedTokenService } from './embed-tokens/embed-tokens.service.js';
import {
  createEmbedTokenRevocationService,
  createRevocationNames,
} from './embed-tokens/embed-token-revocations.service.js';
import { createEmbedTokenLifecycleService } from './embed-tokens/embed-token-introspection.service.js';
import { createKeyRotationService } from './encryption-keys/key-rotation.service.js';
import type { Keyring } from './encryption-keys/keyring.js';
import { createIdempotencyService } from './idempotency/idempotency.service.js';
import { createOperationsService } from './operations.service.js';
import { createSchemaService } from './schemas/schemas.service.js';
import { createSigningKeyService } from './signing-keys/signing-keys.service.js';
import { createUserGroupAdminService } from './user-groups/user-group-admin.service.js';
import { createUserGroupTransferService } from './user-groups/user-group-transfer.service.js';
import { createUserGroupService } from './user-groups/user-groups.service.js';
import {
  createWebhookEndpointService,
  type WebhookAddressPolicy,
} from './webhook-endpoints/webhook-endpoints.service.js';
import { createUserGroupViewer } from './user-groups/user-group.view.js';
import { createWorkspaceService } from './workspaces/workspaces.service.js';
import { NO_USAGE_COUNTING, type UsageCounter } from './usage/usage-counter.js';
import { createUsageService } from './usage/usage.service.js';
import { createUserGroupSyncService } from './user-group-sync/user-group-sync.service.js';
import type { Store } from './store.port.js';

export type Services = ReturnType<typeof createServices>;

export interface ServiceOptions {
  store: Store;
  cipher: Keyring;
  clock: Clock;
  /** The service's public URL (no trailing slash), the base of embed-token issuers. */
  publicUrl: () => string;
  /** Where webhooks may be sent (docs/api.md#webhooks): checked when an endpoint's URL is set. */
  webhookAddresses: WebhookAddressPolicy;
  /** Told what an operator should know but that fails nothing (e.g. an ANALYZE the role may not run). */
  warn?: (message: string) => void;
  /** Where the hot path counts usage per group (docs/api.md#usage-per-group): nowhere unless given (the CLI, `--usage off`). */
  usageCounter?: UsageCounter;
  /** How long an instance signs with the current key it read before reading it again: CURRENT_KEY_HELD_MS unless given (tests). */
  currentKeyHeldMs?: number;
}

/** The domain layer as one value: what the HTTP routes and the CLI both call. */
export function createServices({
  store,
  cipher,
  clock,
  publicUrl,
  webhookAddresses,
  warn = () => undefined,
  usageCounter = NO_USAGE_COUNTING,
  currentKeyHeldMs,
}: ServiceOptions) {
  const signingKeys = createSigningKeyService({ store, cipher, clock, currentKeyHeldMs });
  const view = createUserGroupViewer(cipher);
  const names = createRevocationNames(store);
  // Each checks a signature before any group read: a remembered API token is admitted on entry (a
  // mint's group read, as the other hot operations', admits it itself).
  const embedTokens = admittedOnEntry(
    createEmbedTokenService({ store, signingKeys, view, clock, publicUrl, names, usage: usageCounter }),
    ['verify', 'ownedClaims'],
  );
  return {
    userGroups: createUserGroupService({ store, cipher, clock, view, usage: usageCounter }),
    userGroupAdmin: createUserGroupAdminService({ store, view }),
    userGroupTransfer: createUserGroupTransferService({ store, cipher, clock, warn }),
    userGroupSync: createUserGroupSyncService({ store, cipher, clock, warn }),
    audit: createAuditService({ store }),
    apiTokens: createApiTokenService({ store, clock }),
    schemas: createSchemaService({ store, clock }),
    dataSources: createDataSourceService({ store, clock }),
    workspaces: createWorkspaceService({ store, clock }),
    keyRotation: createKeyRotationService({ store, keyring: cipher, clock }),
    idempotency: createIdempotencyService({ store, cipher, clock }),
    signingKeys,
    embedTokens,
    embedTokenRevocations: createEmbedTokenRevocationService({ store, embedTokens, names, view, clock }),
    embedTokenLifecycle: createEmbedTokenLifecycleService({ embedTokens, store, clock }),
    webhookEndpoints: createWebhookEndpointService({ store, cipher, clock, addresses: webhookAddresses }),
    operations: createOperationsService({ store }),
    consoleSessions: createConsoleSessionService({ store, clock }),
    /** Console sign-in through the identity provider, for a server configured with one. */
    oidcSignIn: (settings: OidcSettings) => createOidcSignInService({ store, clock, settings }),
    personSessions: createPersonSessionAdmin({ store, clock }),
    usage: createUsageService({ store, clock }),
  };
}
