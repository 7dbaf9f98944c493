// docs/migrating.md's commands, read from the document and run as written by bash, move the groups
// of a hosted product's stand-in into a real `ugs serve` (this project's engine). Against recorded
// responses carrying every field: each old token verifies, opens the hosted product's paths and
// `/api/user`, and is replaced at its first rotation, and the copied mappings resolve. Against a
// stand-in answering only the fields the hosted product's API document lists, in both environments,
// with the lines in random order: what the export lacks is reported and supplied, the check passes,
// and every group verifies with its team_id, tree, demo flag and mapping exactly as it was there.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
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

/** The guide's shell blocks, in order: export, catalogue, import, check the move, check one token. */
const BLOCKS = [...GUIDE.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** The hosted product as its API answers get-or-create of existing groups, per environment's API token. */
function hostedProduct(responsesByToken: Record<string, Record<string, unknown>>): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const answer = (status: number, value: unknown) => {
        response.writeHead(status, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.method !== 'GET' || request.url !== '/api/user') return answer(404, { success: 0 });
      const responses = responsesByToken[(request.headers.authorization ?? '').replace(/^Token /, '')];
      if (!responses) return answer(401, { success: 0 });
      const { user_group_id } = JSON.parse(body) as { user_group_id: string };
      const recorded = responses[user_group_id];
      return recorded ? answer(200, recorded) : answer(404, { success: 0 });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** What the application writes from its own records (docs/migrating.md, step 3). */
const supplementLine = (
  group: { provided_id: string; mapping: Record<string, string>; is_demo_group: boolean },
  parent: string | null = null,
) =>
  JSON.stringify({
    provided_id: group.provided_id,
    mapping: group.mapping,
    parent_user_group_id: parent,
    is_demo_group: group.is_demo_group,
  });

/** A temporary folder with `ugs` on the PATH, as an installed package puts it, and the guide's environment. */
function guideFolder(
  db: TestDatabase,
  server: ServeProcess,
  hosted: Server,
  tokens: { Customer: string; Testing: string },
) {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-migrating-'));
  writeFileSync(join(dir, 'ugs'), `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, 'bin', 'ugs.js')}" "$@"\n`);
  chmodSync(join(dir, 'ugs'), 0o755);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PATH: `${dir}:${process.env.PATH ?? ''}`,
    UGS_DATABASE_URL: db.url,
    UGS_LOG_LEVEL: 'warn',
    ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
    HOSTED_API: `http://127.0.0.1:${(hosted.address() as AddressInfo).port}`,
    HOSTED_CUSTOMER_TOKEN: tokens.Customer,
    HOSTED_TESTING_TOKEN: tokens.Testing,
    UGS_URL: server.baseUrl.replace(/\/$/, ''),
  };
  const runBlock = async (index: number) => {
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${BLOCKS[index]!}`], { cwd: dir, env });
    return stdout;
  };
  return { dir, env, runBlock };
}

describe('docs/migrating.md, run as written', () => {
  let db: TestDatabase;
  let server: ServeProcess;
  let hosted: Server;
  let dir: string;
  let runBlock: (index: number) => Promise<string>;
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

  beforeAll(async () => {
    expect(BLOCKS).toHaveLength(5);
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServeProcess(db);
    apiToken = server.adminTokens().Customer;
    hosted = await hostedProduct({ [RECORDED.api_token]: RECORDED.responses, 'hosted-testing-token': {} });
    const folder = guideFolder(db, server, hosted, { Customer: RECORDED.api_token, Testing: 'hosted-testing-token' });
    ({ dir, runBlock } = folder);
    folder.env.UGS_API_TOKEN = apiToken;
    folder.env.GROUP_TOKEN = HOSTED[0]!.token;
    writeFileSync(join(dir, 'customer-ids.txt'), `${Object.keys(RECORDED.responses).join('\n')}\n`);
    writeFileSync(join(dir, 'testing-ids.txt'), '');
    writeFileSync(
      join(dir, 'supplement-customer.jsonl'),
      `${HOSTED.map((group) => supplementLine(group)).join('\n')}\n`,
    );
    writeFileSync(join(dir, 'supplement-testing.jsonl'), '');
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await new Promise((resolve) => hosted?.close(resolve));
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('moves the groups with their tokens, team_ids and mappings; old tokens work until their first rotation', async () => {
    await runBlock(0);
    const exported = readFileSync(join(dir, 'hosted-customer.jsonl'), 'utf8').trim().split('\n');
    expect(exported.map((line) => JSON.parse(line) as unknown)).toEqual(Object.values(RECORDED.responses));
    expect(readFileSync(join(dir, 'hosted-testing.jsonl'), 'utf8')).toBe('');

    expect((await runBlock(1)).trim().split('\n')).toEqual(['40', '134', '213', '214', '386']);
    const imported = await runBlock(2);
    expect(imported).toContain('created 3, updated 0, unchanged 0, rejected 0');
    // The recorded responses carry all but the parent, which the supplement gives.
    expect(imported).toContain('lacking 3 lines: parent_user_group_id 3 (supplied 3)\n');
    expect(await runBlock(3)).toContain('checked 3, matched 3, differ 0, missing 0, unreadable 0');

    const checked = JSON.parse(await runBlock(4)) as { success: number; user_group: Record<string, unknown> };
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

/** A deterministic shuffle (a test must not depend on luck): Park–Miller steps from a fixed seed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let index = out.length - 1; index > 0; index -= 1) {
    state = (state * 48271) % 2147483647;
    const other = state % (index + 1);
    [out[index], out[other]] = [out[other]!, out[index]!];
  }
  return out;
}

describe('docs/migrating.md, run as written against the documented response shape, in both environments', () => {
  /** A group as the stand-in knows it; it answers only the documented fields of it. */
  interface StandInGroup {
    team_id: number;
    token: string;
    name: string;
    provided_id: string;
    properties: Record<string, unknown> | null;
    mapping: Record<string, string>;
    parent: string | null;
    is_demo_group: boolean;
  }
  const MAPPINGS: Array<Record<string, string>> = [
    { '40': '213', '134': '386' },
    { '40': '213' },
    { '40': '214' },
    { '134': '386' },
  ];
  /** 20 groups per environment: 4 roots, each with children, some with grandchildren (three levels). */
  const groupsOf = (environment: 'Customer' | 'Testing', firstTeamId: number): StandInGroup[] =>
    Array.from({ length: 20 }, (_, index) => {
      const provided_id = `${environment.toLowerCase()}-${index}`;
      const parent =
        index < 4
          ? null
          : index < 12
            ? `${environment.toLowerCase()}-${index % 4}`
            : `${environment.toLowerCase()}-${index - 8}`;
      return {
        team_id: firstTeamId + index * 3,
        token: randomUUID(),
        name: `${environment} group ${index}`,
        provided_id,
        properties: index % 3 === 0 ? null : { region: index % 2 ? 'emea' : 'amer', seats: index },
        // Testing maps to the same data source ids as Customer, as the hosted product allows.
        mapping: MAPPINGS[index % MAPPINGS.length]!,
        parent,
        is_demo_group: index % 5 === 4,
      };
    });
  const STAND_IN = { Customer: groupsOf('Customer', 70_001), Testing: groupsOf('Testing', 90_002) };
  const TOKENS = { Customer: 'hosted-customer-token-5e1a', Testing: 'hosted-testing-token-7c3b' };
  /** Exactly the fields the hosted product's API document lists for get-or-create. */
  const documented = (group: StandInGroup) => ({
    success: 1,
    new_user_group: false,
    user_group: {
      team_id: group.team_id,
      token: group.token,
      name: group.name,
      provided_id: group.provided_id,
      properties: group.properties,
    },
  });

  let db: TestDatabase;
  let server: ServeProcess;
  let hosted: Server;
  let dir: string;
  let folder: ReturnType<typeof guideFolder>;

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServeProcess(db);
    hosted = await hostedProduct({
      [TOKENS.Customer]: Object.fromEntries(STAND_IN.Customer.map((group) => [group.provided_id, documented(group)])),
      [TOKENS.Testing]: Object.fromEntries(STAND_IN.Testing.map((group) => [group.provided_id, documented(group)])),
    });
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await new Promise((resolve) => hosted?.close(resolve));
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("carries every field it can, reports and supplies the rest, checks, and keeps both environments' mappings", async () => {
    folder = guideFolder(db, server, hosted, TOKENS);
    dir = folder.dir;
    for (const [environment, seed] of [
      ['Customer', 7],
      ['Testing', 11],
    ] as const) {
      const groups = STAND_IN[environment];
      // The lines in random order: children before parents, high team_ids before low ones.
      const order = shuffled(groups, seed);
      writeFileSync(
        join(dir, `${environment.toLowerCase()}-ids.txt`),
        `${order.map((group) => group.provided_id).join('\n')}\n`,
      );
      writeFileSync(
        join(dir, `supplement-${environment.toLowerCase()}.jsonl`),
        `${shuffled(groups, seed + 1)
          .map((group) => supplementLine(group, group.parent))
          .join('\n')}\n`,
      );
    }

    await folder.runBlock(0);
    for (const environment of ['Customer', 'Testing'] as const) {
      const lines = readFileSync(join(dir, `hosted-${environment.toLowerCase()}.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(lines).toHaveLength(20);
      for (const line of lines)
        expect(Object.keys((JSON.parse(line) as { user_group: object }).user_group).sort()).toEqual([
          'name',
          'properties',
          'provided_id',
          'team_id',
          'token',
        ]);
    }
    await folder.runBlock(1);

    // What the export could not carry is reported per line, and the supplement gave it.
    const imported = await folder.runBlock(2);
    expect(imported.match(/created 20, updated 0, unchanged 0, rejected 0/g)).toHaveLength(2);
    expect(
      imported.match(
        /lacking 20 lines: mapping 20 \(supplied 20\), parent_user_group_id 20 \(supplied 20\), is_demo_group 20 \(supplied 20\)\n/g,
      ),
    ).toHaveLength(2);
    expect(
      imported.match(
        /lacks mapping, parent_user_group_id, is_demo_group; the supplement gave mapping, parent_user_group_id, is_demo_group/g,
      ),
    ).toHaveLength(40);

    // The check step passes for both environments.
    expect((await folder.runBlock(3)).match(/checked 20, matched 20, differ 0, missing 0, unreadable 0/g)).toHaveLength(
      2,
    );

    // Verify answers each group as the stand-in had it, mapping included, in its own environment.
    const tokens = server.adminTokens();
    for (const environment of ['Customer', 'Testing'] as const) {
      for (const group of STAND_IN[environment]) {
        const response = await fetch(`${server.baseUrl.replace(/\/$/, '')}/api/user/verify`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Token ${tokens[environment]}` },
          body: JSON.stringify({ token: group.token }),
        });
        expect(response.status).toBe(200);
        const { user_group } = (await response.json()) as { user_group: Record<string, unknown> };
        expect(user_group).toMatchObject({
          team_id: group.team_id,
          name: group.name,
          provided_id: group.provided_id,
          properties: group.properties,
          mapping: group.mapping,
          parent_user_group_id: group.parent,
          is_demo_group: group.is_demo_group,
          api_environment_tag: environment,
        });
      }
    }
  });

  it('then: the check exits 2 on a difference; team_ids in reverse order are kept up to their bound', async () => {
    const ugs = async (args: string) => {
      try {
        return { code: 0, stdout: (await run('bash', ['-c', `ugs ${args}`], { cwd: dir, env: folder.env })).stdout };
      } catch (error) {
        const failed = error as { code: number; stdout: string };
        return { code: failed.code, stdout: failed.stdout };
      }
    };
    const lines = readFileSync(join(dir, 'hosted-customer.jsonl'), 'utf8').trim().split('\n');
    const tampered = lines.map((line, index) =>
      index === 0 ? line.replace(/"name":"[^"]*"/, '"name":"Not as imported"') : line,
    );
    writeFileSync(join(dir, 'tampered.jsonl'), `${tampered.join('\n')}\n`);
    const failed = await ugs(
      'groups verify-import tampered.jsonl --environment Customer --supplement supplement-customer.jsonl',
    );
    expect(failed.code).toBe(2);
    expect(failed.stdout).toMatch(
      /^checked 20, matched 19, differ 1, missing 0, unreadable 0\n {2}line 1 \(customer-\d+\): name is "Customer group \d+", the file has "Not as imported"\n$/,
    );

    // Descending team_ids, one batch each, and one above the bound.
    const reverse = [3_000_000_000, 400_003, 400_002, 400_001].map((teamId) =>
      JSON.stringify({ team_id: teamId, token: randomUUID(), provided_id: `reverse-${teamId}`, properties: null }),
    );
    writeFileSync(join(dir, 'reverse.jsonl'), `${reverse.join('\n')}\n`);
    expect((await ugs('groups import reverse.jsonl --environment Testing --batch-size 1')).code).toBe(0);
    const exported = (await ugs('groups export --environment Testing')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { provided_id: string; team_id: number })
      .filter((group) => group.provided_id.startsWith('reverse-'));
    const teamIds = Object.fromEntries(exported.map((group) => [group.provided_id, group.team_id]));
    expect(teamIds).toMatchObject({ 'reverse-400003': 400_003, 'reverse-400002': 400_002, 'reverse-400001': 400_001 });
    expect(teamIds['reverse-3000000000']).toBeLessThan(400_001);
  });
});
