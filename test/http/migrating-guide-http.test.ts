// docs/migrating.md's HTTP way of step 3 (its `bash` block, the alternative to `ugs groups import`),
// read from the document and run as written by bash against a real `ugs serve`: the recorded export
// of the hosted product goes in through POST /api/admin/user_groups/import, a dry run first, and every
// old token then verifies with the group and mapping the hosted product had.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const GUIDE = readFileSync(join(REPO, 'docs', 'migrating.md'), 'utf8');
const RECORDED = JSON.parse(
  readFileSync(join(REPO, 'test', 'fixtures', 'hosted-product-user-groups.json'), 'utf8'),
) as {
  responses: Record<string, { user_group: Record<string, unknown> & { token: string } }>;
};

/** The guide's `bash` blocks: the alternatives to its `sh` steps (which test/http/migrating-guide.test.ts runs). */
const HTTP_BLOCKS = [...GUIDE.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1]!);

describe('docs/migrating.md, step 3 over HTTP, run as written', () => {
  let db: TestDatabase;
  let server: ServeProcess;
  let dir: string;
  let adminToken = '';
  const base = () => server.baseUrl.replace(/\/$/, '');

  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', Authorization: `Token ${adminToken}` },
      body: JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    expect(HTTP_BLOCKS).toHaveLength(1);
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServeProcess(db);
    adminToken = server.adminTokens().Customer;
    dir = mkdtempSync(join(tmpdir(), 'ugs-migrating-http-'));
    // Step 1's file, as the export loop writes it; step 2's catalogue, through the admin API.
    writeFileSync(
      join(dir, 'hosted-groups.jsonl'),
      Object.values(RECORDED.responses)
        .map((response) => JSON.stringify(response))
        .join('\n') + '\n',
    );
    for (const [name, id] of [
      ['Sales', 40],
      ['Finance', 134],
    ] as const)
      expect((await call('POST', '/api/admin/schemas', { name, id })).status).toBe(200);
    for (const [id, schemaId] of [
      [213, 40],
      [214, 40],
      [386, 134],
    ] as const) {
      const body = { id, provided_id: String(id), name: `Data source ${id}`, schema_id: schemaId };
      expect((await call('POST', '/api/admin/data_sources', body)).status).toBe(200);
    }
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('imports the export with its tokens after a dry run that writes nothing, and each old token verifies', async () => {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${HTTP_BLOCKS[0]!}`], {
      cwd: dir,
      env: { ...inherited, UGS_URL: base(), UGS_ADMIN_TOKEN: adminToken },
    });
    const answers = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { success: number; import: Record<string, unknown> });
    // The hosted product's groups show no parent: each line says so, and is imported all the same.
    const recorded = Object.values(RECORDED.responses);
    const summary = {
      created: 3,
      updated: 0,
      unchanged: 0,
      rejected: [],
      lacking: recorded.map(({ user_group: group }, index) => ({
        line: index + 1,
        provided_id: group.provided_id,
        fields: ['parent_user_group_id'],
      })),
      lacking_lines: recorded.length,
      lacking_fields: { parent_user_group_id: { lacked: recorded.length } },
    };
    expect(answers).toEqual([
      { success: 1, import: { dry_run: true, ...summary } },
      { success: 1, import: { dry_run: false, ...summary } },
    ]);

    for (const { user_group: group } of Object.values(RECORDED.responses)) {
      const { status, body } = await call('POST', '/api/user/verify', { token: group.token });
      expect(status).toBe(200);
      expect(body.user_group).toMatchObject(group);
    }
  });
});
