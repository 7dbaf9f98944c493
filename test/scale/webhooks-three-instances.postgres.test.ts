// Three `ugs serve` processes on one PostgreSQL database deliver one outbox to one receiver (docs/api.md#webhooks):
// every event arrives, no event is ever being delivered by two instances at once, and an event
// arrives twice only when the instance delivering it was killed before it could record the outcome.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase } from '../support/test-database.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { everyDeliveryReceived, useWebhookScaleFixture, WEBHOOK_SERVE_ENV } from './helpers.js';
import { call } from '../support/http-client.js';

const LANES_PER_INSTANCE = 4;
const WRITE_MS = 2_500;
/** An outcome is recorded right after the answer: an event answered this shortly before the kill may not have been. */
const RECORDING_WINDOW_MS = 1_000;

const fixture = useWebhookScaleFixture();

describe('three instances deliver one outbox', () => {
  it('delivers every event, never by two instances at once, duplicates only around a killed instance', async ({
    annotate,
  }) => {
    const db = (fixture.db = await createTestDatabase('postgres'));
    const first = await startServeProcess(db, { env: WEBHOOK_SERVE_ENV });
    const admin = first.adminTokens().Customer;
    const instances: ServeProcess[] = [
      first,
      ...(await Promise.all([
        startServeProcess(db, { env: WEBHOOK_SERVE_ENV }),
        startServeProcess(db, { env: WEBHOOK_SERVE_ENV }),
      ])),
    ];
    // Slow enough that several deliveries are open at any moment, and some when the kill comes.
    const receiver = (fixture.receiver = await startWebhookReceiver(() => ({
      delayMs: 5 + Math.floor(Math.random() * 30),
    })));
    const created = await call(first, {
      method: 'POST',
      path: '/api/admin/webhook_endpoints',
      token: admin,
      body: { url: receiver.url, events: ['*'] },
    });
    expect(created.status, created.raw).toBe(200);

    // Writes through all three instances; each lane renames its own groups, one request at a time.
    let writing = true;
    let acknowledged = 0;
    const acknowledgedBy = instances.map(() => 0);
    const lanes = instances.flatMap((instance, index) =>
      Array.from({ length: LANES_PER_INSTANCE }, async (_, lane) => {
        for (let n = 0; writing; n += 1) {
          const id = `three_${index}_${lane}_${randomBytes(3).toString('hex')}`;
          for (let step = 0; step < 4 && writing; step += 1) {
            const response = await call(instance, {
              method: step === 0 ? 'GET' : 'PUT',
              path: '/api/user',
              token: admin,
              body: { user_group_id: id, name: `${id} ${step}` },
            }).catch(() => undefined);
            if (response?.status !== 200) return;
            acknowledged += 1;
            acknowledgedBy[index]! += 1;
          }
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, WRITE_MS / 2));
    // Kill the second instance mid-delivery: what the receiver is answering now, or answered just
    // before, may come again from another instance once the lease runs out.
    const killedAt = Date.now();
    expect(await instances[1]!.stop('SIGKILL')).toBeNull();
    const mayRepeat = new Set([
      ...[...receiver.inFlight].filter(([, open]) => open > 0).map(([id]) => id),
      ...receiver.received
        .filter((entry) => entry.at >= killedAt - RECORDING_WINDOW_MS)
        .map((entry) => entry.json.id as string),
    ]);
    await new Promise((resolve) => setTimeout(resolve, WRITE_MS / 2));
    writing = false;
    await Promise.all(lanes);

    // Every instance, the killed one included (it wrote for half the time), acknowledged writes:
    // otherwise the delivery count below would hold vacuously.
    for (const count of acknowledgedBy) expect(count).toBeGreaterThan(0);
    const deliveries = await everyDeliveryReceived(instances[0]!, admin, receiver);
    expect(deliveries.length).toBeGreaterThanOrEqual(acknowledged);

    expect(receiver.overlapping, 'events delivered by two instances at the same time').toEqual([]);
    const counts = new Map<string, number>();
    for (const entry of receiver.received) counts.set(entry.json.id, (counts.get(entry.json.id) ?? 0) + 1);
    const repeated = [...counts].filter(([, count]) => count > 1).map(([id]) => id);
    expect(
      repeated.filter((id) => !mayRepeat.has(id)),
      'events received twice though no instance died delivering them',
    ).toEqual([]);
    await annotate(
      `${deliveries.length} events from ${acknowledged} acknowledged writes on three instances; ${repeated.length} received twice, all around the kill`,
    );
  }, 120_000);
});
