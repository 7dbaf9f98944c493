// SIGTERM while a 10 000-group prune runs. The server drains and exits 0 rather than
// waiting the sync out: the sync in progress stops at its next step with nothing written (503), or,
// if it had already finished, stands whole. Restarted on the same database, the same prune plans
// all 10 000 deletes again (stopped) or none (applied). Runs on the project's engine.
import { afterAll, describe, expect, it } from 'vitest';
import { send, type ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { uniqueId } from '../support/unique-id.js';

const GROUPS = 10_000;
/** When SIGTERM comes after the prune was sent, ms: while its plan reads. */
const SIGTERM_AFTER_MS = 300;
const SYNC = '/api/admin/user_groups/sync';

function sync(server: ServeProcess, token: string, body: string, query: string): Promise<ApiResponse> {
  return send(server.baseUrl, {
    method: 'POST',
    path: `${SYNC}?${query}`,
    token,
    rawBody: body,
    headers: { 'content-type': body.startsWith('[') ? 'application/json' : 'application/x-ndjson' },
  });
}

describe('SIGTERM during a sync', () => {
  let db: TestDatabase | undefined;

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it(
    'drains and exits 0, the prune stopped with nothing written or applied whole',
    { timeout: 300_000 },
    async ({ annotate }) => {
      db = await createTestDatabase();
      let server = await startServeProcess(db);
      const token = server.adminTokens().Customer;
      const tag = uniqueId('managed');
      const body = Array.from({ length: GROUPS }, (_, i) =>
        JSON.stringify({
          user_group_id: `${tag}-${i}`,
          tags: [tag],
          ...(i < 1000 ? {} : { parent_user_group_id: `${tag}-${i % 1000}` }),
        }),
      ).join('\n');
      const created = await sync(server, token, body, '');
      expect(created.status, created.raw.slice(0, 500)).toBe(200);

      // The file leaves every tagged group out: the prune would delete all 10 000.
      const prune = sync(server, token, '[]', `prune=${tag}`).then(
        (response) => response,
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, SIGTERM_AFTER_MS));
      expect(await server.stop('SIGTERM')).toBe(0);
      const answer = await prune;

      server = await startServeProcess(db);
      const plan = await sync(server, token, '[]', `prune=${tag}&dry_run=true`);
      expect(plan.status).toBe(200);
      const left = plan.body.sync.summary.delete;
      expect([0, GROUPS]).toContain(left);
      // Answered: stopped with nothing written, or applied whole.
      if (answer?.status === 503) {
        expect(answer.body.error.code).toBe('unavailable');
        expect(left).toBe(GROUPS);
      } else if (answer?.status === 200) expect(left).toBe(0);
      else expect(answer, 'the prune was neither answered 200 nor 503').toBeUndefined();
      await annotate(`prune answered ${answer?.status ?? 'nothing'}; ${left} of ${GROUPS} left to delete`);
      expect(await server.stop('SIGTERM')).toBe(0);
    },
  );
});
