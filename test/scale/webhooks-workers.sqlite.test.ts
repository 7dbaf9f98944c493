// `ugs serve --workers 2` on SQLite delivers one outbox from both worker processes (docs/api.md#webhooks): each
// event exactly once (nobody was killed), never by both at once, each group's events in order.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../support/serve-process.js';
import { createTestDatabase } from '../support/test-database.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { childPids, waitFor, useWebhookScaleFixture, WEBHOOK_SERVE_ENV } from './helpers.js';
import { call } from '../support/http-client.js';

const GROUPS = 24;
const UPDATES = 5;

const fixture = useWebhookScaleFixture();

describe('webhooks with --workers 2 on SQLite', () => {
  it('delivers every event once, in order per group, from both workers and never from both at once', async ({
    annotate,
  }) => {
    const db = (fixture.db = await createTestDatabase('sqlite'));
    const server = await startServeProcess(db, {
      args: ['--workers', '2'],
      env: { ...WEBHOOK_SERVE_ENV, UGS_LOG_LEVEL: 'info' },
    });
    const admin = server.adminTokens().Customer;
    // Slow answers keep one worker's 16 attempts per endpoint busy while more of the 24 groups' events
    // are due, so the other worker's claims find work whatever the machine's load (with fast answers,
    // one busy worker could take every event between the other's idle polls).
    const receiver = (fixture.receiver = await startWebhookReceiver(() => ({
      delayMs: 150 + Math.floor(Math.random() * 100),
    })));
    const created = await call(server, {
      method: 'POST',
      path: '/api/admin/webhook_endpoints',
      token: admin,
      body: { url: receiver.url, events: ['user_group.created', 'user_group.updated'] },
    });
    expect(created.status, created.raw).toBe(200);

    const ids = Array.from({ length: GROUPS }, (_, n) => `workers_${n}_${randomBytes(3).toString('hex')}`);
    await Promise.all(
      ids.map(async (id) => {
        for (let step = 0; step <= UPDATES; step += 1) {
          const response = await call(server, {
            method: step === 0 ? 'GET' : 'PUT',
            path: '/api/user',
            token: admin,
            body: { user_group_id: id, name: `${id} ${step}` },
          });
          expect(response.status, response.raw).toBe(200);
        }
      }),
    );
    await receiver.waitFor((received) => received.length >= GROUPS * (UPDATES + 1), 30_000);
    // A moment for anything sent twice to arrive.
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(receiver.overlapping).toEqual([]);
    expect(new Set(receiver.received.map((entry) => entry.json.id)).size).toBe(receiver.received.length);
    expect(receiver.received.length).toBe(GROUPS * (UPDATES + 1));
    for (const id of ids) {
      const names = receiver.received
        .filter((entry) => entry.json.data.user_group.provided_id === id)
        .map((entry) => entry.json.data.user_group.name);
      expect(names).toEqual(Array.from({ length: UPDATES + 1 }, (_, step) => `${id} ${step}`));
    }
    // Both workers took part: their attempt log lines carry two pids, both the primary's children.
    const workers = childPids(server.pid);
    const attempting = await waitFor('attempt lines of both workers', 5_000, () => {
      const pids = new Set(
        server
          .stdout()
          .split('\n')
          .filter((line) => line.includes('"msg":"webhook attempt"'))
          .map((line) => (JSON.parse(line) as { pid: number }).pid),
      );
      return pids.size === 2 ? [...pids] : undefined;
    });
    expect(attempting.sort()).toEqual(workers.sort());
    await annotate(`${receiver.received.length} events delivered once each by workers ${attempting.join(' and ')}`);
  }, 90_000);
});
