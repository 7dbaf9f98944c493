// docs/migrating.md's commands, read from the document and run as written by
// bash, move the groups of a recorded hosted-product response into a real `ugs serve` (this
// project's engine); then each old token verifies, opens the hosted product's paths and `/api/user`,
// and is replaced at its first rotation, and the copied mappings resolve.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { type UserGroup } from '../support/group-maker.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const GUIDE = readFileSync(join(REPO, 'docs', 'migrating.md'), 'utf8');

/** A user group as the hosted product's API returns it. */
type HostedGroup = Omit<UserGroup, 'created_at' | 'updated_at'> & { is_demo_group: boolean };

/** What this service answers, as far as the test reads it. */
interface Answer {
  status: number;
  body: { success: number; new_user_group?: boolean; user_group: UserGroup & { is_demo_group: boolean } };
}
const RECORDED = JSON.parse(
  readFileSync(join(REPO, 'test', 'fixtures', 'hosted-product-user-groups.json'), 'utf8'),
) as {
  api_token: string;
  responses: Record<string, { success: 1; new_user_group: false; user_group: HostedGroup }>;
};
const HOSTED = Object.values(RECORDED.responses).map((response) => response.user_group);

/** The guide's shell blocks, in order: export, catalogue, import, check. */
const BLOCKS = [...GUIDE.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** The hosted product as its API answers get-or-create of existing groups (the recorded responses). */
function hostedProduct(): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const answer = (status: number, value: unknown) => {
        response.writeHead(status, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.method !== 'GET' || request.url !== '/api/user') return answer(404, { success: 0 });
      if (request.headers.authorization !== `Token ${RECORDED.api_token}`) return answer(401, { success: 0 });
      const { user_group_id } = JSON.parse(body) as { user_group_id: string };
      const recorded = RECORDED.responses[user_group_id];
      return recorded ? answer(200, recorded) : answer(404, { success: 0 });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('docs/migrating.md, run as written', () => {
  let db: TestDatabase;
  let server: ServeProcess;
  let hosted: Server;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let apiToken = '';

  const call = async (method: string, path: string, body: unknown, header = 'Authorization'): Promise<Answer> => {
    const response = await fetch(`${server.baseUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', [header]: `Token ${apiToken}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const verify = (token: string) => call('POST', '/api/user/verify', { token });
  const runBlock = async (index: number) => {
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${BLOCKS[index]!}`], { cwd: dir, env });
    return stdout;
  };

  beforeAll(async () => {
    expect(BLOCKS).toHaveLength(4);
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServeProcess(db);
    apiToken = server.adminTokens().Customer;
    hosted = await hostedProduct();
    dir = mkdtempSync(join(tmpdir(), 'ugs-migrating-'));
    // `ugs` on the PATH, as an installed package puts it.
    writeFileSync(join(dir, 'ugs'), `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, 'bin', 'ugs.js')}" "$@"\n`);
    chmodSync(join(dir, 'ugs'), 0o755);
    writeFileSync(join(dir, 'user-group-ids.txt'), `${Object.keys(RECORDED.responses).join('\n')}\n`);
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
    env = {
      ...inherited,
      PATH: `${dir}:${process.env.PATH ?? ''}`,
      UGS_DATABASE_URL: db.url,
      UGS_LOG_LEVEL: 'warn',
      ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
      HOSTED_API: `http://127.0.0.1:${(hosted.address() as AddressInfo).port}`,
      HOSTED_API_TOKEN: RECORDED.api_token,
      UGS_URL: server.baseUrl.replace(/\/$/, ''),
      UGS_API_TOKEN: apiToken,
      GROUP_TOKEN: HOSTED[0]!.token,
    };
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await new Promise((resolve) => hosted?.close(resolve));
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('moves the groups with their tokens, team_ids and mappings; old tokens work until their first rotation', async () => {
    await runBlock(0);
    const exported = readFileSync(join(dir, 'hosted-groups.jsonl'), 'utf8').trim().split('\n');
    expect(exported.map((line) => JSON.parse(line) as unknown)).toEqual(Object.values(RECORDED.responses));

    expect((await runBlock(1)).trim().split('\n')).toEqual(['40', '134', '213', '214', '386']);
    expect(await runBlock(2)).toContain('created 3, updated 0, unchanged 0, rejected 0');

    const checked = JSON.parse(await runBlock(3)) as { success: number; user_group: Record<string, unknown> };
    expect(checked).toMatchObject({
      success: 1,
      user_group: { provided_id: 'example_1', token: HOSTED[0]!.token, mapping: { 40: '213', 134: '386' } },
    });

    // Every old token verifies, with the group as the hosted product had it.
    for (const group of HOSTED) {
      const { status, body } = await verify(group.token);
      expect(status).toBe(200);
      expect(body.user_group).toMatchObject({ ...group, properties: group.properties });
    }

    // The hosted product's paths, with its header, as code written for it calls them.
    const [first, second, third] = HOSTED as [HostedGroup, HostedGroup, HostedGroup];
    const got = await call(
      'POST',
      '/api/create_user_group/',
      { user_group_id: first.provided_id },
      'Explo-Authorization',
    );
    expect(got.body).toMatchObject({ success: 1, new_user_group: false, user_group: { token: first.token } });
    const updated = await call(
      'POST',
      '/api/update_user_group/',
      { user_group_id: third.provided_id, name: 'Acme Corporation' },
      'Explo-Authorization',
    );
    expect(updated.body.user_group).toMatchObject({ name: 'Acme Corporation', token: third.token });

    // The first rotation replaces a hosted token by a native one; the old one stops at once.
    const refreshed = await call(
      'POST',
      '/api/refresh_user_group_token/',
      { current_token: first.token },
      'Explo-Authorization',
    );
    expect(refreshed.status).toBe(200);
    const native = refreshed.body.user_group.token;
    expect(native).toMatch(/^ugt_[0-9a-f]{64}$/);
    expect((await verify(first.token)).status).toBe(404);
    expect((await verify(native)).body.user_group).toMatchObject({ team_id: first.team_id, mapping: first.mapping });
    // /api/user's own rotation of a hosted token, and delete by one.
    const rotated = await call('POST', '/api/user', { current_token: third.token });
    expect(rotated.body.user_group.token).toMatch(/^ugt_[0-9a-f]{64}$/);
    expect((await verify(third.token)).status).toBe(404);
    const deleted = await call(
      'DELETE',
      '/api/delete_user_group/',
      { current_token: second.token },
      'Explo-Authorization',
    );
    expect(deleted).toEqual({ status: 200, body: { success: 1 } });
    expect((await verify(second.token)).status).toBe(404);

    // New groups are numbered above the imported team_ids.
    const created = await call('POST', '/api/create_user_group/', { user_group_id: 'brand-new' });
    expect(created.body.user_group.team_id).toBeGreaterThan(Math.max(...HOSTED.map((group) => group.team_id)));
  });
});
