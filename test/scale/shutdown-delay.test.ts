// SIGTERM with a shutdown delay, as an instance behind a load balancer is stopped: /readyz fails at
// once so the balancer stops sending, requests are still answered for the delay, then the drain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { call } from '../support/http-client.js';
import { getOrCreate } from '../support/user-group-api.js';
import { expectError } from '../support/error-envelope.js';
import { uniqueId } from '../support/unique-id.js';
import { waitFor } from '../support/wait-for.js';

const DELAY_MS = 3_000;

let db: TestDatabase;
let server: ServeProcess;
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServeProcess(db, { env: { UGS_SHUTDOWN_DELAY_MS: String(DELAY_MS) } });
  admin = server.adminTokens().Customer;
});

afterAll(async () => {
  await stopAllServeProcesses();
  await db?.drop();
});

describe('ugs serve --shutdown-delay-ms', () => {
  it('fails /readyz from the signal on, still serves during the delay, then drains and exits 0', async () => {
    expect((await call(server, { method: 'GET', path: '/readyz' })).status).toBe(200);
    const exited = server.stop('SIGTERM');

    // The signal takes a moment to arrive: then readiness fails, while the process still serves.
    const readiness = await waitFor('/readyz to fail after SIGTERM', DELAY_MS / 2, async () => {
      const response = await call(server, { method: 'GET', path: '/readyz' });
      return response.status === 200 ? undefined : response;
    });
    expectError(readiness, 503, 'unavailable');
    expect((await call(server, { method: 'GET', path: '/healthz' })).status).toBe(200);
    const created = await getOrCreate(server, admin, { user_group_id: uniqueId('late'), name: 'Late' });
    expect(created.status, created.raw).toBe(200);

    expect(await exited).toBe(0);
  });
});
