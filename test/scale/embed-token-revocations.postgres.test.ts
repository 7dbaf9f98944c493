// Revocation reaching offline verifiers across three `ugs serve` processes on one PostgreSQL
// database (docs/renderers.md, "Revocation"): after a rotation, a deletion, a group revoke and a token
// revoke on one instance, a verifier of each build pointed at each instance refuses the revoked
// tokens once its staleness bound has passed, and other tokens still verify. Then the document with
// 100 000 revocations is measured: bytes (asserted within the bound docs/renderers.md states),
// verifier memory and time to fetch and apply (printed; no timed assertion).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';
import { call } from '../support/http-client.js';
import { makeGroup } from '../support/group-maker.js';
import { uniqueId } from '../support/unique-id.js';
import type * as ClientModuleNamespace from '../../packages/client/src/index.js';

type ClientModule = typeof ClientModuleNamespace;

const PUBLIC_URL = 'https://ugs.example.test';
const ISSUER = `${PUBLIC_URL}/w/default`;
const BOUND_MS = 500;

let db: TestDatabase;
let instances: ServeProcess[];
let admin: string;
let builds: Array<[string, ClientModule]>;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  const options = { env: { UGS_PUBLIC_URL: PUBLIC_URL } };
  const first = await startServeProcess(db, options);
  admin = first.adminTokens().Customer;
  instances = [first, ...(await Promise.all([startServeProcess(db, options), startServeProcess(db, options)]))];
  const node = await import('../../packages/client/src/index.js');
  vi.resetModules();
  vi.doMock('#crypto', () => import('../../packages/client/src/crypto/web.js'));
  const web = await import('../../packages/client/src/index.js');
  vi.doUnmock('#crypto');
  builds = [
    ['node:crypto', node],
    ['WebCrypto', web],
  ];
});

afterAll(async () => {
  await stopAllServeProcesses();
  await db?.drop();
});

/** A fetch that sends what the verifier asks of the public URL to one instance, as a load balancer would. */
const towards =
  (instance: ServeProcess): typeof fetch =>
  (input, init) =>
    fetch(String(input instanceof Request ? input.url : input).replace(PUBLIC_URL, instance.baseUrl), init);

async function post(instance: ServeProcess, path: string, body: unknown) {
  const res = await call(instance, { method: 'POST', path, token: admin, body });
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

const mint = async (instance: ServeProcess, userGroupId: string) =>
  (await post(instance, '/api/user/embed_token', { user_group_id: userGroupId })).embed_token as string;

describe('revocation across three instances on one PostgreSQL database', () => {
  it('reaches a verifier pointed at each instance within its bound; other groups’ tokens still verify', async () => {
    const names = ['rotated', 'deleted', 'revoked-group', 'revoked-token', 'bystander'];
    const groups = [];
    for (const name of names)
      groups.push(await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId(name) }));
    // Minted on every instance: each names the group alike (grp), whichever minted it.
    const tokens = await Promise.all(groups.map((group, i) => mint(instances[i % 3]!, group.provided_id)));
    const kept = await mint(instances[1]!, groups[3]!.provided_id);

    const verifiers = builds.flatMap(([build, client]) =>
      instances.map((instance, i) => ({
        name: `${build} → instance ${i + 1}`,
        Revoked: client.EmbedTokenRevokedError,
        verify: client.createEmbedTokenVerifier({
          issuer: ISSUER,
          audience: 'ugs-embed',
          fetch: towards(instance),
          revocations: { maxAgeMs: BOUND_MS },
        }),
      })),
    );
    for (const { verify } of verifiers) for (const token of [...tokens, kept]) await verify(token);

    // Every change on the first instance.
    const [rotated, deleted, revokedGroup] = groups;
    await post(instances[0]!, '/api/user', { current_token: rotated!.token });
    const removed = await call(instances[0]!, {
      method: 'DELETE',
      path: '/api/user',
      token: admin,
      body: { user_group_id: deleted!.provided_id },
    });
    expect(removed.status, removed.raw).toBe(200);
    await post(instances[0]!, '/api/user/embed_token/revoke', { user_group_id: revokedGroup!.provided_id });
    await post(instances[0]!, '/api/user/embed_token/revoke', { embed_token: tokens[3] });
    const changedAt = performance.now();
    const fresh = await mint(instances[2]!, rotated!.provided_id);

    // Measured: when each verifier first refuses each revoked token, polling.
    const latest: number[] = [];
    for (const { name, verify, Revoked } of verifiers) {
      const refusedAfter: number[] = [];
      for (const token of tokens.slice(0, 4)) {
        for (;;) {
          const error = await verify(token).then(
            () => undefined,
            (caught: unknown) => caught,
          );
          if (error !== undefined) {
            expect(error, name).toBeInstanceOf(Revoked);
            break;
          }
          if (performance.now() - changedAt > 20 * BOUND_MS) throw new Error(`${name} still accepts a revoked token`);
          await sleep(10);
        }
        refusedAfter.push(performance.now() - changedAt);
      }
      latest.push(Math.max(...refusedAfter));
    }
    process.stdout.write(
      `revocations refused by all ${verifiers.length} verifiers at most ${Math.round(Math.max(...latest))} ms after the last change (bound ${BOUND_MS} ms)\n`,
    );

    // Past the bound, on every verifier: every revoked token refused, every other one verifies.
    await sleep(Math.max(0, BOUND_MS - (performance.now() - changedAt)) + 50);
    for (const { name, verify, Revoked } of verifiers) {
      for (const token of tokens.slice(0, 4)) await expect(verify(token), name).rejects.toBeInstanceOf(Revoked);
      expect((await verify(tokens[4]!)).sub, name).toBe(groups[4]!.provided_id);
      expect((await verify(kept)).sub, name).toBe(groups[3]!.provided_id);
      expect((await verify(fresh)).sub, name).toBe(rotated!.provided_id);
    }
    // Online verify agrees on every instance.
    for (const instance of instances)
      for (const token of tokens.slice(0, 4)) {
        const res = await call(instance, { method: 'POST', path: '/api/user/verify', token: admin, body: { token } });
        expect(res.status, res.raw).toBe(404);
      }
  });

  it('measures the document after 100 000 revocations: bytes, verifier memory, time to fetch and apply', async () => {
    const now = Math.floor(Date.now() / 1000);
    await withPostgresClient(async (client) => {
      const [{ id }] = (await client.query(`SELECT id FROM workspaces WHERE name = 'default'`)).rows as [
        { id: string },
      ];
      // 50 000 groups (the longest entries: 22-character names) and 50 000 single tokens.
      await client.query(
        `INSERT INTO embed_token_revocations (workspace_id, environment, team_id, before_generation, expires_at)
          SELECT $1, 'Customer', 10000000 + n, 3, $2 FROM generate_series(1, 50000) AS n`,
        [id, now + 86_000],
      );
      await client.query(
        `INSERT INTO embed_token_revocations (workspace_id, environment, jti, expires_at)
          SELECT $1, 'Customer', '7.' || gen_random_uuid(), $2 FROM generate_series(1, 50000) AS n`,
        [id, now + 3_600],
      );
    }, db.url);

    const first = performance.now();
    const res = await fetch(`${instances[1]!.baseUrl}/w/default/.well-known/revocations.json`);
    const text = await res.text();
    const renderMs = performance.now() - first;
    const bytes = Buffer.byteLength(text);
    const document = JSON.parse(text) as { groups: unknown[]; tokens: unknown[] };
    expect(document.groups.length + document.tokens.length).toBeGreaterThanOrEqual(100_000);
    // The bound docs/renderers.md states: under 70 bytes an entry.
    expect(bytes).toBeLessThan(100_000 * 70);

    const group = await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId('measured') });
    const token = await mint(instances[0]!, group.provided_id);
    for (const [build, client] of builds) {
      const plain = client.createEmbedTokenVerifier({
        issuer: ISSUER,
        audience: 'ugs-embed',
        fetch: towards(instances[1]!),
      });
      await plain(token);
      const heapBefore = process.memoryUsage().heapUsed;
      const verify = client.createEmbedTokenVerifier({
        issuer: ISSUER,
        audience: 'ugs-embed',
        fetch: towards(instances[1]!),
        revocations: { maxAgeMs: 60_000 },
      });
      const started = performance.now();
      expect((await verify(token)).sub).toBe(group.provided_id);
      const fetchAndApplyMs = performance.now() - started;
      const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
      const cached = performance.now();
      await verify(token);
      process.stdout.write(
        `[${build}] 100 000 revocations: ${(bytes / 2 ** 20).toFixed(2)} MiB (${Math.round(bytes / 100_000)} B an entry), first render ${Math.round(renderMs)} ms, fetch and apply ${Math.round(fetchAndApplyMs)} ms, heap +${heapMiB.toFixed(1)} MiB, a verify after it ${((performance.now() - cached) * 1000).toFixed(0)} µs\n`,
      );
    }
  });
});
