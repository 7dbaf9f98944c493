// A sync is all or nothing, also when `ugs serve` is killed with SIGKILL while it applies.
// Each round sends a sync of many new groups, kills the server at a different moment of the apply,
// restarts it on the same database, and asks for the plan of the same file again: it must create
// every group (nothing was applied) or none (all was). Runs on the project's engine.
import { afterAll, describe, expect, it } from 'vitest';
import { send, type ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const GROUPS = 4000;
/** When the kill comes after the request was sent, ms: early, mid-apply, and late. */
const KILL_AFTER_MS = [150, 400, 800, 1500, 3000];

const SYNC = '/api/admin/user_groups/sync';

function syncRequest(server: ServeProcess, token: string, body: string, dryRun: boolean): Promise<ApiResponse> {
  return send(server.baseUrl, {
    method: 'POST',
    path: dryRun ? `${SYNC}?dry_run=true` : SYNC,
    token,
    rawBody: body,
    headers: { 'content-type': 'application/x-ndjson' },
  });
}

describe('a sync killed mid-apply', () => {
  let db: TestDatabase | undefined;

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('leaves either none or all of it, round after round', { timeout: 300_000 }, async ({ annotate }) => {
    db = await createTestDatabase();
    let server = await startServeProcess(db);
    const token = server.adminTokens().Customer;
    const outcomes: string[] = [];

    for (const [round, delay] of KILL_AFTER_MS.entries()) {
      const body = Array.from({ length: GROUPS }, (_, i) =>
        JSON.stringify({
          user_group_id: `round${round}-${i}`,
          properties: { round, i },
          tags: [`round-${round}`],
          ...(i % 4 === 0 ? {} : { parent_user_group_id: `round${round}-${i - (i % 4)}` }),
        }),
      ).join('\n');
      const inFlight = syncRequest(server, token, body, false).then(
        (response) => `answered ${response.status}`,
        () => 'cut off',
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
      await server.stop('SIGKILL');
      const request = await inFlight;

      server = await startServeProcess(db);
      const plan = await syncRequest(server, token, body, true);
      expect(plan.status).toBe(200);
      const { summary } = plan.body.sync;
      const state = summary.create === GROUPS ? 'none' : summary.unchanged === GROUPS ? 'all' : 'part';
      outcomes.push(`kill after ${delay} ms (request ${request}): ${state} applied`);
      expect(state, JSON.stringify(summary)).not.toBe('part');
      // An answered 200 was applied before the kill.
      if (request === 'answered 200') expect(state).toBe('all');
    }
    await annotate(outcomes.join('; '));
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
