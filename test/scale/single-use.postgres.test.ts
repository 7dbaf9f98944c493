// Single-use embed tokens (docs/api.md#single-use-tokens) on three `ugs serve` processes sharing one PostgreSQL database:
// of many concurrent checks of one token, spread over the instances, exactly one succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../support/http-client.js';
import { makeGroup } from '../support/group-maker.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';
import { VERIFY_PATH } from '../support/user-group-api.js';

const CONCURRENT = 50;

let db: TestDatabase;
let instances: ServeProcess[];
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  const options = { env: { UGS_PUBLIC_URL: 'https://ugs.example.test' } };
  const first = await startServeProcess(db, options);
  admin = first.adminTokens().Customer;
  instances = [first, ...(await Promise.all([startServeProcess(db, options), startServeProcess(db, options)]))];
});

afterAll(async () => {
  await stopAllServeProcesses();
  await db?.drop();
});

async function singleUseToken(): Promise<{ token: string; jti: string }> {
  const group = await makeGroup({ target: instances[0]!, token: admin });
  const minted = await call(instances[1]!, {
    method: 'POST',
    path: '/api/user/embed_token',
    token: admin,
    body: { user_group_id: group.provided_id, single_use: true },
  });
  expect(minted.status, minted.raw).toBe(200);
  const token = minted.body.embed_token as string;
  const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti as string;
  return { token, jti };
}

const introspect = (instance: ServeProcess, token: string) =>
  call(instance, {
    method: 'POST',
    path: '/w/default/introspect',
    token: admin,
    rawBody: `token=${token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

const consumptions = async (jti: string) =>
  (
    await withPostgresClient(
      (client) => client.query('SELECT count(*)::int AS n FROM consumed_embed_tokens WHERE jti = $1', [jti]),
      db.url,
    )
  ).rows[0].n as number;

describe('single-use embed tokens on three instances', () => {
  it(`${CONCURRENT} concurrent introspections of one token over three instances: exactly one is active`, async () => {
    const { token, jti } = await singleUseToken();
    const answers: ApiResponse[] = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, index) => introspect(instances[index % 3]!, token)),
    );
    for (const answer of answers) expect(answer.status, answer.raw).toBe(200);
    expect(answers.filter((answer) => answer.body.active === true)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.active === false)).toHaveLength(CONCURRENT - 1);
    expect(await consumptions(jti)).toBe(1);
  });

  it(`${CONCURRENT} concurrent online verifies of one token over three instances: exactly one succeeds`, async () => {
    const { token, jti } = await singleUseToken();
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, index) =>
        call(instances[index % 3]!, { method: 'POST', path: VERIFY_PATH, token: admin, body: { token } }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((each) => each.status !== 200)) {
      expect(answer.status, answer.raw).toBe(404);
      expect(answer.body.error.code).toBe('user_group_not_found');
    }
    expect(await consumptions(jti)).toBe(1);
    // Consumed everywhere: every instance now answers inactive.
    for (const instance of instances) expect((await introspect(instance, token)).body).toEqual({ active: false });
  });
});
