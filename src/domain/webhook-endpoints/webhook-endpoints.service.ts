import { randomBytes } from 'node:crypto';
import { auditContextOf } from '../audit/audit-context.js';
import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import type { Timestamp } from '../common.records.js';
import type {
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
  WebhookEventFilter,
} from './webhook.records.js';
import { fetchPage, type Page } from '../pagination.js';
import { requireScope } from '../api-tokens/scopes.js';
import type { TokenCipher } from '../secrets.js';
import type { Caller, Environment } from '../tenancy.js';
import type { WebhookStore } from './webhooks.port.js';
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_EVENT_TYPES } from '../../wire/contract.constants.js';

/** A rotated-out secret keeps signing beside the new one this long (docs/api.md#webhooks), so receivers can switch over. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** Checks that a URL may receive deliveries (scheme, and where its host resolves): the address rules of docs/api.md#webhooks. */
export interface WebhookAddressPolicy {
  /** Throws `invalid_field` (field `url`) when the URL must not be called. */
  assertDeliverable(url: string): Promise<void>;
}

export interface NewWebhookEndpointInput {
  url: string;
  events: WebhookEventFilter[];
  /** Defaults to the caller's environment. */
  environment?: Environment;
  /** Defaults to none (''). */
  description?: string;
}

export interface WebhookEndpointChange {
  url?: string;
  events?: WebhookEventFilter[];
  description?: string;
  enabled?: boolean;
}

/** A new or rotated endpoint with its secret, which exists in the clear only in this value. */
export interface IssuedWebhookEndpoint {
  record: WebhookEndpointRecord;
  secret: string;
}

export interface WebhookDeliveryFilter {
  endpointId?: number;
  status?: WebhookDeliveryStatus;
  /** Cursor: deliveries older than this id. */
  beforeId?: number;
  limit: number;
}

/** `whsec_` and the base64 of 32 random bytes, the form the Standard Webhooks libraries take. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
export function signingSecrets(
  endpoint: WebhookEndpointRecord,
  cipher: Pick<TokenCipher, 'decrypt'>,
  now: Timestamp,
): string[] {
  const secrets = [cipher.decrypt(endpoint.secretCiphertext)];
  if (endpoint.previousSecretCiphertext && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(cipher.decrypt(endpoint.previousSecretCiphertext));
  }
  return secrets;
}

/** Distinct event types, or `*` alone; refused with the field at fault otherwise. */
function checkedEvents(events: WebhookEventFilter[]): WebhookEventFilter[] {
  const known = new Set<string>([...WEBHOOK_EVENT_TYPES, '*']);
  const unknown = events.find((event) => !known.has(event));
  if (unknown !== undefined)
    throw failure.webhookEvents(
      `Unknown event type ${JSON.stringify(unknown)}; use ${[...WEBHOOK_EVENT_TYPES, '*'].join(', ')}.`,
    );
  if (events.length === 0) throw failure.webhookEvents('List at least one event type, or "*" for all.');
  if (new Set(events).size !== events.length) throw failure.webhookEvents('An event type is listed twice.');
  if (events.includes('*') && events.length > 1)
    throw failure.webhookEvents('"*" already stands for every event type: list it alone.');
  return events;
}

/** An absolute http(s) URL without credentials or fragment; where its host resolves is the address policy's to check. */
function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw failure.webhookUrl('must be an absolute http or https URL');
  }
  if (url.length > MAX_WEBHOOK_URL_LENGTH)
    throw failure.webhookUrl(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw failure.webhookUrl('must use http or https');
  // Credentials in a URL would be stored and listed in the clear: a secret belongs in the signature.
  if (parsed.username !== '' || parsed.password !== '')
    throw failure.webhookUrl('must not carry a user name or password');
  if (parsed.hash !== '') throw failure.webhookUrl('must not have a fragment');
  return url;
}

export type WebhookEndpointService = ReturnType<typeof createWebhookEndpointService>;

/** Webhook endpoints and their deliveries (docs/api.md#webhooks), for the admin API and the CLI. */
export function createWebhookEndpointService({
  store,
  cipher,
  clock,
  addresses,
}: {
  store: WebhookStore;
  cipher: TokenCipher;
  clock: Clock;
  addresses: WebhookAddressPolicy;
}) {
  const notFound = failure.webhookEndpointNotFound;

  /** The endpoint, if it belongs to the caller's workspace and environment. */
  const ownEndpoint = async (caller: Caller, id: number): Promise<WebhookEndpointRecord> => {
    const endpoint = await store.findWebhookEndpoint(caller.tenant, id);
    if (!endpoint) throw notFound(id);
    return endpoint;
  };

  const deliverableUrl = async (url: string): Promise<string> => {
    await addresses.assertDeliverable(checkedUrl(url));
    return url;
  };

  return {
    async create(caller: Caller, input: NewWebhookEndpointInput): Promise<IssuedWebhookEndpoint> {
      requireScope(caller, 'admin');
      const events = checkedEvents(input.events);
      const url = await deliverableUrl(input.url);
      const secret = generateWebhookSecret();
      const record = await store.insertWebhookEndpoint(
        {
          workspaceId: caller.tenant.workspaceId,
          environment: input.environment ?? caller.tenant.environment,
          url,
          events,
          description: input.description ?? '',
          secretCiphertext: cipher.encrypt(secret),
          createdAt: clock(),
        },
        auditContextOf(clock, caller),
      );
      return { record, secret };
    },

    async list(caller: Caller): Promise<WebhookEndpointRecord[]> {
      requireScope(caller, 'admin');
      return store.listWebhookEndpoints(caller.tenant);
    },

    async show(caller: Caller, id: number): Promise<WebhookEndpointRecord> {
      requireScope(caller, 'admin');
      return ownEndpoint(caller, id);
    },

    async update(caller: Caller, id: number, change: WebhookEndpointChange): Promise<WebhookEndpointRecord> {
      requireScope(caller, 'admin');
      if (Object.values(change).every((value) => value === undefined)) {
        throw failure.emptyWebhookPatch();
      }
      // Unknown first (404), then the new values' rules (400): nothing about the values is checked,
      // or resolved, for an endpoint the caller does not have.
      await ownEndpoint(caller, id);
      const patch = {
        ...change,
        ...(change.events === undefined ? {} : { events: checkedEvents(change.events) }),
        ...(change.url === undefined ? {} : { url: await deliverableUrl(change.url) }),
      };
      const updated = await store.updateWebhookEndpoint(caller.tenant, id, patch, auditContextOf(clock, caller));
      if (!updated) throw notFound(id);
      return updated;
    },

    async remove(caller: Caller, id: number): Promise<WebhookEndpointRecord> {
      requireScope(caller, 'admin');
      const deleted = await store.deleteWebhookEndpoint(caller.tenant, id, auditContextOf(clock, caller));
      if (!deleted) throw notFound(id);
      return deleted;
    },

    /** A new secret signs from now on; the one it replaces signs beside it for SECRET_OVERLAP_MS. */
    async rotateSecret(caller: Caller, id: number): Promise<IssuedWebhookEndpoint> {
      requireScope(caller, 'admin');
      const secret = generateWebhookSecret();
      const context = auditContextOf(clock, caller);
      const expiresAt = new Date(Date.parse(context.at) + SECRET_OVERLAP_MS).toISOString();
      const record = await store.rotateWebhookSecret(caller.tenant, id, cipher.encrypt(secret), expiresAt, context);
      if (!record) throw notFound(id);
      return { record, secret };
    },

    async listDeliveries(caller: Caller, filter: WebhookDeliveryFilter): Promise<Page<WebhookDeliveryRecord>> {
      requireScope(caller, 'admin');
      if (filter.endpointId !== undefined) await ownEndpoint(caller, filter.endpointId);
      return fetchPage(
        filter.limit,
        (limit) => store.listWebhookDeliveries({ ...caller.tenant, ...filter, limit }),
        (delivery) => delivery.id,
        (delivery) => delivery,
      );
    },

    /** Queues the delivery again at once, with a fresh attempt budget, whatever its status. */
    async retryDelivery(caller: Caller, id: number): Promise<WebhookDeliveryRecord> {
      requireScope(caller, 'admin');
      const retried = await store.retryWebhookDelivery(caller.tenant, id, auditContextOf(clock, caller));
      if (!retried) throw failure.webhookDeliveryNotFound(id);
      return retried;
    },
  };
}
