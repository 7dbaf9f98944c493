// `ugs keys rotate` while `ugs serve` keeps serving: concurrent get-or-create, token
// rotations, verifications and creations never fail, and afterwards every token is under the new
// key and still the same. SQLite (project sqlite): keys from the key file, which the server reloads
// by itself. PostgreSQL (project postgres): keys from UGS_ENCRYPTION_KEY, the new key already first
// in the server's list (the runbook's rolling restarts done), as with several instances.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runUgs } from '../support/ugs-command.js';
import { openDatabaseReader } from '../support/database-reader.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import type { ApiResponse } from '../support/http-client.js';
import { waitFor } from './helpers.js';
import { call } from '../support/http-client.js';
import { getOrCreate, verify } from '../support/user-group-api.js';
import { keyIdOf } from '../support/encryption-keys.js';

/** Groups that exist before the server starts, so that it has decrypted none of them yet. */
const SEEDED_GROUPS = 2_000;
const WORKERS = 4;
/** Requests each worker makes before the rotation starts, and again after it ended. */
const OPS_AROUND_ROTATION = 40;

const newToken = () => `ugt_${randomBytes(32).toString('hex')}`;

/** What one traffic worker owns: only it touches these groups, so it always knows each one's token. */
interface Owned {
  tokens: Map<string, string>;
}

/**
 * Workers that loop over get-or-create of a known group, verify, token rotation and creation of a
 * new group until stopped. Every unexpected answer (any non-200, a token other than the one known)
 * is recorded, not thrown, so the traffic keeps running to the end.
 */
function startTraffic(server: ServeProcess, admin: string, owned: Owned[]) {
  const failures: string[] = [];
  let ops = 0;
  let stopped = false;
  const expect200 = (what: string, response: ApiResponse): boolean => {
    if (response.status === 200) return true;
    failures.push(`${what}: ${response.status} ${response.raw}`);
    return false;
  };
  const work = async (worker: number, { tokens }: Owned) => {
    for (let i = 0; !stopped; i++) {
      const ids = [...tokens.keys()];
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const known = tokens.get(id)!;
      switch (i % 5) {
        case 0:
        case 1: {
          const got = await getOrCreate(server, admin, { user_group_id: id });
          if (expect200(`get-or-create ${id}`, got) && got.body.user_group.token !== known)
            failures.push(`get-or-create ${id} returned another token`);
          break;
        }
        case 2: {
          const verified = await verify(server, admin, known);
          if (expect200(`verify ${id}`, verified) && verified.body.user_group.provided_id !== id)
            failures.push(`verify of ${id}'s token found another group`);
          break;
        }
        case 3: {
          const rotated = await call(server, {
            method: 'POST',
            path: '/api/user',
            token: admin,
            body: { current_token: known },
          });
          if (expect200(`rotate ${id}`, rotated)) tokens.set(id, rotated.body.user_group.token as string);
          break;
        }
        default: {
          const created = await getOrCreate(server, admin, { user_group_id: `w${worker}-new-${i}` });
          if (expect200(`create w${worker}-new-${i}`, created))
            tokens.set(`w${worker}-new-${i}`, created.body.user_group.token as string);
        }
      }
      ops++;
    }
  };
  const running = Promise.all(owned.map((slice, worker) => work(worker, slice)));
  return {
    failures,
    ops: () => ops,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

describe(`ugs keys rotate while ugs serve is serving (${TEST_ENGINE})`, () => {
  let db: TestDatabase;
  /** UGS_ENCRYPTION_KEY of the CLI commands: the old key alone to seed, then new,old. Unset on SQLite (key file). */
  let seedEnv: Record<string, string>;
  let rotationEnv: Record<string, string>;
  let newKeyId: string | undefined;

  const ugs = (env: Record<string, string>, ...args: string[]): Promise<RunResult> =>
    runUgs([...args, '--database', db.url], { env });

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    if (db.encryptionKey === undefined) {
      seedEnv = rotationEnv = {};
    } else {
      const newKey = randomBytes(32).toString('base64');
      newKeyId = keyIdOf(newKey);
      seedEnv = { UGS_ENCRYPTION_KEY: db.encryptionKey };
      rotationEnv = { UGS_ENCRYPTION_KEY: `${newKey},${db.encryptionKey}` };
    }
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it(
    'no request fails, every token stays the same, and every ciphertext ends under the new key',
    { timeout: 180_000 },
    async () => {
      // Seeded by the CLI under the old key, tokens ours, spread over the workers.
      const owned: Owned[] = Array.from({ length: WORKERS }, () => ({ tokens: new Map() }));
      const lines = Array.from({ length: SEEDED_GROUPS }, (_, index) => {
        const line = { provided_id: `seed-${index}`, name: `Seed ${index}`, token: newToken() };
        owned[index % WORKERS]!.tokens.set(line.provided_id, line.token);
        return JSON.stringify(line);
      });
      const seedFile = join(db.dir, 'seed.jsonl');
      writeFileSync(seedFile, `${lines.join('\n')}\n`);
      const seeded = await ugs(seedEnv, 'groups', 'import', seedFile, '--environment', 'Customer', '--json');
      expect(seeded.code, seeded.stderr).toBe(0);
      const oldKeyId =
        db.encryptionKey === undefined
          ? keyIdOf(readFileSync(`${db.sqlitePath}.key`, 'utf8').trim())
          : keyIdOf(db.encryptionKey);

      // At info, so that its log shows the key file reload.
      const server = await startServeProcess(db, { env: { ...rotationEnv, UGS_LOG_LEVEL: 'info' } });
      const admin = server.adminTokens().Customer;
      const traffic = startTraffic(server, admin, owned);

      await waitFor('traffic before the rotation', 60_000, () =>
        traffic.ops() >= WORKERS * OPS_AROUND_ROTATION ? true : undefined,
      );
      const opsBefore = traffic.ops();
      const rotation = await ugs(rotationEnv, 'keys', 'rotate', '--json');
      const opsDuring = traffic.ops() - opsBefore;
      const opsAfterRotation = traffic.ops();
      await waitFor('traffic after the rotation', 60_000, () =>
        traffic.ops() >= opsAfterRotation + WORKERS * OPS_AROUND_ROTATION ? true : undefined,
      );
      await traffic.stop();

      expect(traffic.failures).toEqual([]);
      expect(rotation.code, rotation.stderr).toBe(0);
      const summary = JSON.parse(rotation.stdout) as {
        key_id: string;
        re_encrypted: { user_group_tokens: number };
        remaining: unknown[];
      };
      if (newKeyId !== undefined) expect(summary.key_id).toBe(newKeyId);
      expect(summary.key_id).not.toBe(oldKeyId);
      expect(summary.remaining).toEqual([]);
      // The seeded groups the traffic did not rotate were all still under the old key.
      expect(summary.re_encrypted.user_group_tokens).toBeGreaterThan(SEEDED_GROUPS / 2);
      // The traffic really ran while the rotation did.
      expect(opsDuring).toBeGreaterThan(0);

      const reader = await openDatabaseReader(db);
      try {
        const keyIds = await reader.select<{ key_id: string; n: number }>(
          'SELECT substr(token_ciphertext, 4, 8) AS key_id, count(*) AS n FROM user_groups GROUP BY 1',
        );
        const groups = owned.reduce((sum, slice) => sum + slice.tokens.size, 0);
        expect(keyIds.map((row) => ({ key_id: row.key_id, n: Number(row.n) }))).toEqual([
          { key_id: summary.key_id, n: groups },
        ]);
      } finally {
        await reader.close();
      }
      if (db.encryptionKey === undefined) {
        expect(readFileSync(`${db.sqlitePath}.key`, 'utf8').trim().split('\n').map(keyIdOf)).toEqual([
          summary.key_id,
          oldKeyId,
        ]);
        const reloads = server
          .stdout()
          .split('\n')
          .filter((line) => line.includes('encryption keys reloaded'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        expect(reloads).toEqual([
          expect.objectContaining({ level: 30, keyId: summary.key_id, keyIds: [summary.key_id, oldKeyId] }),
        ]);
      }

      // Every group, rotated during the run or not, still verifies and get-or-create returns its token.
      const everyGroup = owned.flatMap((slice) => [...slice.tokens]);
      for (let start = 0; start < everyGroup.length; start += 16) {
        await Promise.all(
          everyGroup.slice(start, start + 16).map(async ([id, token]) => {
            const verified = await verify(server, admin, token);
            expect(verified.status, verified.raw).toBe(200);
            expect(verified.body.user_group).toMatchObject({ provided_id: id, token });
            const got = await getOrCreate(server, admin, { user_group_id: id });
            expect(got.status, got.raw).toBe(200);
            expect(got.body).toMatchObject({ new_user_group: false, user_group: { token } });
          }),
        );
      }
    },
  );
});
