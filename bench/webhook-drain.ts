// Webhook delivery throughput (docs/api.md#webhooks): a backlog of events drained by the service's one
// delivery worker to a fast receiver on loopback, here in the bench process.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { latencyFigures, type LoadFigures } from './wrk.js';
import type { Seeded } from './seed.js';

/** Events in the backlog: every seeded sample group renamed once per round, until there are this many. */
const BACKLOG = 5000;
/** Renames in flight while the backlog builds. */
const PARALLEL = 32;
/** The receiver holds requests this long at most while the backlog builds: under the service's 10 s attempt timeout. */
const HOLD_LIMIT_MS = 8000;

async function call(port: number, token: string, method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify(body),
  });
  if (response.status !== 200)
    throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
}

/**
 * Builds a backlog of BACKLOG events while the receiver holds the first requests unanswered (so the
 * rest wait in the outbox), then lets it answer 204 at once and times how long the backlog takes to
 * arrive. Figures: deliveries a second; the "latencies" are when each delivery arrived after the release.
 */
export async function measureWebhookDrain(port: number, seeded: Seeded): Promise<LoadFigures> {
  let holding = true;
  const held: ServerResponse[] = [];
  const arrivals = new Map<string, number>();
  let releasedAt = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      if (holding) {
        held.push(response);
        return;
      }
      if (!arrivals.has(id)) arrivals.set(id, performance.now() - releasedAt);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  try {
    await call(port, seeded.adminToken, 'POST', '/api/admin/webhook_endpoints', {
      url,
      events: ['user_group.updated'],
    });
    const startedAt = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < BACKLOG) {
          const n = next++;
          const id = seeded.ids[n % seeded.ids.length]!;
          await call(port, seeded.apiToken, 'PUT', '/api/user', { user_group_id: id, name: `drained ${n}` });
        }
      }),
    );
    if (performance.now() - startedAt > HOLD_LIMIT_MS)
      throw new Error(`building the backlog took over ${HOLD_LIMIT_MS} ms: held requests would time out`);
    // Release: the held requests are answered (and counted), everything after is answered at once.
    releasedAt = performance.now();
    holding = false;
    for (const response of held.splice(0)) {
      const id = String(response.req.headers['webhook-id']);
      arrivals.set(id, performance.now() - releasedAt);
      response.writeHead(204).end();
    }
    const deadline = Date.now() + 120_000;
    while (arrivals.size < BACKLOG && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    const seconds = Math.max(...arrivals.values()) / 1000;
    const times = [...arrivals.values()].sort((a, b) => a - b);
    return {
      seconds: Math.round(seconds * 100) / 100,
      responses: arrivals.size,
      ok: arrivals.size,
      okPerSecond: arrivals.size / seconds,
      latencyMs: latencyFigures(times, 1),
      errors: {
        total: BACKLOG - arrivals.size,
        non2xx: 0,
        wrongOutcome: BACKLOG - arrivals.size,
        socket: 0,
        timeouts: 0,
      },
      statusCodes: { 204: arrivals.size },
      cpuUsPerResponse: null,
    };
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}
