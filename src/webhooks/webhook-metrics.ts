import { Counter, Gauge, Registry } from 'prom-client';
import type { WebhookBacklog, WebhookStore } from '../domain/webhook-endpoints/webhooks.port.js';

/**
 * The delivery worker's figures for /metrics: attempts by result, and the backlog (deliveries not
 * yet delivered or failed, and how long the oldest has waited), read from the database at scrape
 * time, so every instance reports the same shared backlog.
 */
export function webhookMetrics(store: Pick<WebhookStore, 'webhookBacklog'>) {
  const registry = new Registry();
  // Both gauges are collected at once on a scrape: they share one read of the backlog.
  let reading: Promise<WebhookBacklog> | undefined;
  const backlog = () =>
    (reading ??= store.webhookBacklog().finally(() => {
      reading = undefined;
    }));
  const attempts = new Counter({
    name: 'ugs_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this process, by result: delivered, retry (failed, will be tried again) or failed (given up).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'ugs_webhook_backlog',
    help: 'Webhook deliveries waiting (pending) for enabled endpoints.',
    registers: [registry],
    // Every worker reads the same shared backlog: summed over workers it would count it N times.
    aggregator: 'max',
    async collect() {
      this.set((await backlog()).pending);
    },
  });
  new Gauge({
    name: 'ugs_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest webhook delivery still pending for an enabled endpoint; 0 when none is.',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const { oldestPendingCreatedAt } = await backlog();
      this.set(
        oldestPendingCreatedAt === null ? 0 : Math.max(0, (Date.now() - Date.parse(oldestPendingCreatedAt)) / 1000),
      );
    },
  });
  return { registry, attempts };
}

export type WebhookMetrics = ReturnType<typeof webhookMetrics>;
