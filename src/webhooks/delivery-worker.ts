import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import type { ClaimedWebhookDelivery } from '../domain/webhook-endpoints/webhook.records.js';
import type { TokenCipher } from '../domain/secrets.js';
import { signingSecrets } from '../domain/webhook-endpoints/webhook-endpoints.service.js';
import type { WebhookStore } from '../domain/webhook-endpoints/webhooks.port.js';
import type { Resolver } from './address-policy.js';
import { systemResolver } from './address-policy.js';
import { webhookMetrics, type WebhookMetrics } from './webhook-metrics.js';
import { webhookPayload } from './webhook-payload.js';
import { createWebhookSender } from './webhook-sender.js';
import { signatureHeader } from './webhook-signature.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;

export interface WebhookWorkerSettings {
  /** Attempts in flight at once, over all endpoints. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint: a slow one cannot take every slot. */
  perEndpointConcurrency: number;
  /** How often an idle worker looks for due deliveries. */
  pollIntervalMs: number;
  /** How long a claim holds a delivery: longer than an attempt can take, so only a dead worker's lease runs out. */
  leaseMs: number;
  /** An attempt's whole time: lookup, connect, answer and body (10 s). */
  attemptTimeoutMs: number;
  /** The waits before each retry; the jitter adds up to a quarter to each. Their sum is the retry window. */
  retryDelaysMs: readonly number[];
  /** An endpoint whose attempts have all failed this long is disabled. */
  failureWindowMs: number;
  /** Finished deliveries and their events are kept this long, then purged. */
  retentionMs: number;
  purgeIntervalMs: number;
  /** Whether deliveries may reach loopback, private, link-local and unspecified addresses. */
  allowPrivate: boolean;
}

/** A first retry within 10 s, then growing waits, eight attempts over a little more than 24 h. */
export const DEFAULT_RETRY_DELAYS_MS = [
  5 * SECOND,
  60 * SECOND,
  10 * 60 * SECOND,
  HOUR,
  3 * HOUR,
  8 * HOUR,
  12 * HOUR,
] as const;

export const DEFAULT_WEBHOOK_WORKER_SETTINGS: WebhookWorkerSettings = {
  concurrency: 64,
  perEndpointConcurrency: 16,
  pollIntervalMs: 200,
  leaseMs: 60 * SECOND,
  attemptTimeoutMs: 10 * SECOND,
  retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
  failureWindowMs: 24 * HOUR,
  retentionMs: 30 * 24 * HOUR,
  purgeIntervalMs: HOUR,
  allowPrivate: false,
};

const PURGE_BATCH = 1000;

/** What the worker logs through: pino's shape, two levels. */
export interface WorkerLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface WebhookWorker {
  readonly metrics: WebhookMetrics;
  /** Stops claiming, lets attempts in flight finish (their leases would keep others off them until they expire), then resolves. */
  stop(): Promise<void>;
}

/** The wait before retry number `retry` (0-based), with up to a quarter added at random so receivers are not hit in waves. */
export function retryDelayMs(delays: readonly number[], retry: number, random: () => number = Math.random): number {
  const base = delays[Math.min(retry, delays.length - 1)]!;
  return Math.round(base * (1 + random() / 4));
}

/**
 * Delivers the outbox (docs/api.md#webhooks) from one process: claims due deliveries under a lease, posts each
 * signed, records the outcome, and retries with backoff. Any number of processes run one each,
 * on one database: the store's claim keeps them off each other's deliveries and keeps each group's
 * events in order per endpoint.
 */
export function startWebhookWorker(options: {
  store: WebhookStore;
  cipher: Pick<TokenCipher, 'decrypt'>;
  clock: Clock;
  logger: WorkerLogger;
  settings?: Partial<WebhookWorkerSettings>;
  resolve?: Resolver;
}): WebhookWorker {
  const settings = { ...DEFAULT_WEBHOOK_WORKER_SETTINGS, ...options.settings };
  const { store, cipher, clock, logger } = options;
  const owner = `worker-${randomBytes(8).toString('hex')}`;
  const sender = createWebhookSender({
    timeoutMs: settings.attemptTimeoutMs,
    allowPrivate: settings.allowPrivate,
    resolve: options.resolve ?? systemResolver,
  });
  const metrics = webhookMetrics(store);
  const inFlight = new Map<number, Promise<void>>();
  const perEndpoint = new Map<number, number>();
  let running = true;
  let wake: (() => void) | undefined;
  const nudge = () => wake?.();

  const later = (ms: number) => new Date(Date.parse(clock()) + ms).toISOString();

  async function attempt(claimed: ClaimedWebhookDelivery): Promise<void> {
    const { endpoint, event } = claimed;
    const now = clock();
    const started = Date.now();
    const timestamp = Math.floor(Date.parse(now) / 1000);
    const body = webhookPayload(event, claimed.workspaceName);
    const response = await sender.send({
      url: endpoint.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'ugs-webhooks/1',
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signingSecrets(endpoint, cipher, now), event.id, timestamp, body),
      },
    });
    const delivered = response.status !== null && response.status >= 200 && response.status < 300;
    const retry = claimed.attempts;
    const exhausted = retry >= settings.retryDelaysMs.length;
    const outcome = delivered ? 'delivered' : exhausted ? 'failed' : 'retry';
    const error = delivered ? null : (response.error ?? `answered ${response.status}`);
    const at = clock();
    const recorded = await store.recordWebhookAttempt({
      deliveryId: claimed.deliveryId,
      owner,
      at,
      outcome,
      ...(outcome === 'retry' ? { nextAttemptAt: later(retryDelayMs(settings.retryDelaysMs, retry)) } : {}),
      responseStatus: response.status,
      error,
      disableIfFailingSince: new Date(Date.parse(at) - settings.failureWindowMs).toISOString(),
    });
    metrics.attempts.inc({ result: outcome });
    // Never the URL (it may carry a key of the receiver's), the body or a secret: ids, status, timing.
    logger[delivered ? 'info' : 'warn'](
      {
        webhook_delivery_id: claimed.deliveryId,
        webhook_endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        attempt: retry + 1,
        outcome,
        status: response.status,
        error,
        ...(response.detail === undefined ? {} : { detail: response.detail }),
        duration_ms: Date.now() - started,
        recorded,
      },
      'webhook attempt',
    );
  }

  function start(claimed: ClaimedWebhookDelivery): void {
    const endpointId = claimed.endpoint.id;
    perEndpoint.set(endpointId, (perEndpoint.get(endpointId) ?? 0) + 1);
    const done = attempt(claimed)
      .catch((error: unknown) => {
        // The outcome could not be recorded (the database is away): the lease runs out and the
        // delivery is attempted again, which at-least-once allows.
        logger.warn({ webhook_delivery_id: claimed.deliveryId, err: error }, 'webhook attempt not recorded');
      })
      .finally(() => {
        inFlight.delete(claimed.deliveryId);
        const left = (perEndpoint.get(endpointId) ?? 1) - 1;
        if (left === 0) perEndpoint.delete(endpointId);
        else perEndpoint.set(endpointId, left);
        nudge();
      });
    inFlight.set(claimed.deliveryId, done);
  }

  async function claimRound(): Promise<number> {
    const free = settings.concurrency - inFlight.size;
    if (free <= 0) return 0;
    const now = clock();
    const claimed = await store.claimWebhookDeliveries({
      owner,
      now,
      leaseUntil: later(settings.leaseMs),
      limit: free,
      skipEndpointIds: [...perEndpoint]
        .filter(([, count]) => count >= settings.perEndpointConcurrency)
        .map(([id]) => id),
    });
    for (const delivery of claimed) start(delivery);
    return claimed.length;
  }

  let lastPurge = 0;
  async function purge(): Promise<void> {
    if (Date.now() - lastPurge < settings.purgeIntervalMs) return;
    lastPurge = Date.now();
    const before = later(-settings.retentionMs);
    while ((await store.purgeWebhookHistory(before, PURGE_BATCH)) === PURGE_BATCH && running);
  }

  const loop = (async () => {
    while (running) {
      let claimed = 0;
      try {
        await purge();
        claimed = await claimRound();
      } catch (error) {
        logger.warn({ err: error }, 'webhook claim failed; trying again shortly');
      }
      // A full round means more may be due: go again at once, unless every slot is taken.
      if (claimed > 0 && inFlight.size < settings.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, settings.pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    metrics,
    async stop() {
      running = false;
      nudge();
      await loop;
      await Promise.allSettled([...inFlight.values()]);
      sender.close();
    },
  };
}
