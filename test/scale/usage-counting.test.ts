// Usage per group (docs/api.md#usage-per-group) counted by real `ugs serve` processes: two instances on one
// PostgreSQL database and two workers of one server on SQLite count every request once, written by
// the timer or by the graceful stop; a kill -9 loses at most what was counted since the last write.
// Loops over both engines itself, so it runs once, in the sqlite project.
import { get } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sample } from '../support/prometheus-text.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { uniqueId } from '../support/unique-id.js';
import { call } from '../support/http-client.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { getOrCreate, verify } from '../support/user-group-api.js';
import { childPids, waitFor } from './helpers.js';

const PUBLIC_URL = { UGS_PUBLIC_URL: 'https://ugs.example.test' };

interface Made {
  embed_tokens_minted: number;
  verifications: number;
  reads: number;
}

const databases: TestDatabase[] = [];
async function database(engine: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  const db = await createTestDatabase(engine);
  databases.push(db);
  return db;
}

afterEach(async () => {
  await stopAllServeProcesses();
});
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

async function ok(response: Promise<Awaited<ReturnType<typeof call>>>) {
  const answered = await response;
  expect(answered.status, answered.raw).toBe(200);
  return answered.body;
}

/**
 * Sends, spread over `servers` in turn and several at a time, `reads` get-or-create calls of the
 * existing group, `verifications` verify calls (half with its group token, half with embed tokens
 * minted for it) and `minted` embed tokens; returns what it made.
 */
async function useGroup(
  servers: ServeProcess[],
  admin: string,
  group: UserGroup,
  { reads, verifications, minted }: { reads: number; verifications: number; minted: number },
): Promise<Made> {
  let turn = 0;
  const next = () => servers[turn++ % servers.length]!;
  const embeds = await Promise.all(
    Array.from({ length: minted }, async () => {
      const body = await ok(
        call(next(), {
          method: 'POST',
          path: '/api/user/embed_token',
          token: admin,
          body: { user_group_id: group.provided_id },
        }),
      );
      return body.embed_token as string;
    }),
  );
  await Promise.all([
    ...Array.from({ length: reads }, () => ok(getOrCreate(next(), admin, { user_group_id: group.provided_id }))),
    ...Array.from({ length: verifications }, (_, i) =>
      ok(verify(next(), admin, i % 2 === 0 || embeds.length === 0 ? group.token : embeds[i % embeds.length]!)),
    ),
  ]);
  return { embed_tokens_minted: minted, verifications, reads };
}

/** GET /metrics as text. */
function scrape(server: ServeProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    get(`${server.baseUrl}/metrics`, { agent: false }, (incoming) => {
      let text = '';
      incoming.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      incoming.on('end', () => resolve(text));
    }).on('error', reject);
  });
}

/** Real processes on two shared cores: starts and stops take seconds each. */
const PROCESS_TEST_TIMEOUT_MS = 120_000;

const totals = async (server: ServeProcess, admin: string, teamId: number): Promise<Made> =>
  (await ok(call(server, { method: 'GET', path: `/api/admin/usage?team_id=${teamId}`, token: admin }))).totals;

const add = (a: Made, b: Made): Made => ({
  embed_tokens_minted: a.embed_tokens_minted + b.embed_tokens_minted,
  verifications: a.verifications + b.verifications,
  reads: a.reads + b.reads,
});

describe('usage counted by several processes', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('two instances on PostgreSQL count every request once, written by their graceful stop', async () => {
    const db = await database('postgres');
    // A flush interval longer than the test: only the stop writes the counts.
    const options = { env: PUBLIC_URL, args: ['--usage-flush-ms', '600000'] };
    const first = await startServeProcess(db, options);
    const admin = first.adminTokens().Customer;
    const instances = [first, await startServeProcess(db, options)];
    const a = await makeGroup({ target: first, token: admin }, { id: uniqueId('usage-a') });
    const b = await makeGroup({ target: instances[1]!, token: admin }, { id: uniqueId('usage-b') });
    const madeA = await useGroup(instances, admin, a, { reads: 23, verifications: 31, minted: 7 });
    const madeB = await useGroup(instances, admin, b, { reads: 5, verifications: 12, minted: 3 });
    // Nothing written yet: the counts are in the instances' memory.
    expect(await totals(first, admin, a.team_id)).toEqual({ embed_tokens_minted: 0, verifications: 0, reads: 0 });

    expect(await Promise.all(instances.map((instance) => instance.stop('SIGTERM')))).toEqual([0, 0]);
    const reader = await startServeProcess(db, options);
    expect(await totals(reader, admin, a.team_id)).toEqual(madeA);
    expect(await totals(reader, admin, b.team_id)).toEqual(madeB);
    const top = await ok(call(reader, { method: 'GET', path: '/api/admin/usage/top?metric=reads', token: admin }));
    expect(top.user_groups.map((g: { team_id: number }) => g.team_id)).toEqual([a.team_id, b.team_id]);
  });

  it('two workers on SQLite count every request once; /metrics sums them per workspace; the stop writes the rest', async () => {
    const db = await database('sqlite');
    const server = await startServeProcess(db, { args: ['--workers', '2', '--usage-flush-ms', '200'] });
    await waitFor('both workers', 20_000, async () => (childPids(server.pid).length === 2 ? true : undefined));
    const admin = server.adminTokens().Customer;
    const group = await makeGroup({ target: server, token: admin }, { id: uniqueId('usage-w') });
    const made = await useGroup([server], admin, group, { reads: 40, verifications: 30, minted: 10 });
    // The timer writes them, and /metrics (either worker answering for both) counts the workspace's.
    await waitFor('the counts written by the timer', 20_000, async () => {
      const written = await totals(server, admin, group.team_id);
      return written.reads === made.reads && written.verifications === made.verifications ? written : undefined;
    });
    const text = await scrape(server);
    for (const metric of ['reads', 'verifications', 'embed_tokens_minted'] as const)
      expect(sample(text, 'ugs_usage_total', { workspace_id: '1', metric }), metric).toBe(made[metric]);
    expect(text).not.toMatch(/ugs_usage_total\{[^}]*team_id/);

    const more = await useGroup([server], admin, group, { reads: 9, verifications: 7, minted: 2 });
    expect(await server.stop('SIGTERM')).toBe(0);
    const reader = await startServeProcess(db);
    expect(await totals(reader, admin, group.team_id)).toEqual(add(made, more));
  });

  for (const engine of ['sqlite', 'postgres'] as const) {
    it(`a kill -9 on ${engine} loses at most what was counted since the last write, and doubles nothing`, async () => {
      const db = await database(engine);
      const options = { env: PUBLIC_URL, args: ['--usage-flush-ms', '300'] };
      const server = await startServeProcess(db, options);
      const admin = server.adminTokens().Customer;
      const group = await makeGroup({ target: server, token: admin }, { id: uniqueId('usage-k') });
      const written = await useGroup([server], admin, group, { reads: 20, verifications: 20, minted: 4 });
      await waitFor('the first counts written by the timer', 20_000, async () => {
        const now = await totals(server, admin, group.team_id);
        return now.reads === written.reads && now.verifications === written.verifications ? now : undefined;
      });
      // The window: counted, and killed before (or while) the next write.
      const window = await useGroup([server], admin, group, { reads: 15, verifications: 15, minted: 3 });
      expect(await server.stop('SIGKILL')).toBeNull();

      const reader = await startServeProcess(db, options);
      const after = await totals(reader, admin, group.team_id);
      const most = add(written, window);
      for (const metric of ['reads', 'verifications', 'embed_tokens_minted'] as const) {
        expect(after[metric], metric).toBeGreaterThanOrEqual(written[metric]);
        expect(after[metric], metric).toBeLessThanOrEqual(most[metric]);
      }
    });
  }
});
