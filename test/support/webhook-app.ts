import { injectClient, type Client } from './http-client.js';
import { createTestApp, type TestApp } from './test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

/** Short waits in place of the production schedule (5 s … 12 h), so retries happen within a test. */
export const FAST_WEBHOOKS = {
  pollIntervalMs: 20,
  retryDelaysMs: [100, 300, 900],
  attemptTimeoutMs: 1000,
  leaseMs: 5000,
};

/**
 * The webhook suites' setup: a test app with a delivery worker on FAST_WEBHOOKS (private addresses
 * allowed, the receivers being on loopback), an inject client on it, and a receiver. The suite closes
 * the app and the receiver after it.
 */
export async function openWebhookApp(): Promise<{ t: TestApp; client: Client; receiver: WebhookReceiver }> {
  const t = await createTestApp({ webhooks: { allowPrivate: true, worker: FAST_WEBHOOKS } });
  return { t, client: injectClient(t.app), receiver: await startWebhookReceiver() };
}
