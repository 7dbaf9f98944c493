// PostgreSQL without surprises: the hot reads keep their plan whether or not the tables
// have statistics, the service analyses its tables after migrations and imports (a warning, not a
// failure, when its role may not), and `ugs serve` warns at start about autovacuum off and about a
// missing public URL.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses } from '../support/serve-process.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';
import { runUgs } from '../support/ugs-command.js';

const GROUPS = 2_000;

interface SentStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** Records the prepared statements the service sends while `work` runs: what it actually asked. */
async function statementsSentDuring(work: () => Promise<void>): Promise<SentStatement[]> {
  const sent = new Map<string, SentStatement>();
  const original = pg.Client.prototype.query;
  const recording = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args as [{ name?: string; text?: string; values?: unknown[] } | undefined];
    if (config?.name && config.text && !sent.has(config.name))
      sent.set(config.name, { name: config.name, text: config.text, values: config.values ?? [] });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  pg.Client.prototype.query = recording as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return [...sent.values()];
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/**
 * A plan as its node types, each scan with the index or table it reads, depth first. A bitmap scan
 * of an index counts as an index scan of it: the same index probed for the same rows, the planner
 * picking one or the other by how many rows it expects (docs/performance.md, "Without statistics").
 */
function shape(node: PlanNode): string[] {
  if (node['Node Type'] === 'Bitmap Heap Scan' && node.Plans?.length === 1)
    return shape({ ...node.Plans[0]!, 'Node Type': 'Index Scan' });
  const target = node['Index Name'] ?? node['Relation Name'];
  return [`${node['Node Type']}${target ? ` on ${target}` : ''}`, ...(node.Plans ?? []).flatMap(shape)];
}

const schemaOf = (db: TestDatabase) => /search_path=(\w+)/.exec(decodeURIComponent(db.url))![1]!;

async function plans(db: TestDatabase, statements: SentStatement[]): Promise<Map<string, string[]>> {
  return withPostgresClient(async (client) => {
    await client.query(`SET search_path = ${schemaOf(db)}`);
    const result = new Map<string, string[]>();
    for (const statement of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({
        text: `EXPLAIN (FORMAT JSON) ${statement.text}`,
        values: statement.values,
      });
      result.set(statement.name, shape(rows[0]!['QUERY PLAN'][0]!.Plan));
    }
    return result;
  });
}

async function analyse(db: TestDatabase): Promise<void> {
  await withPostgresClient(async (client) => {
    const schema = schemaOf(db);
    const { rows } = await client.query<{ tablename: string }>(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1',
      [schema],
    );
    await client.query(`ANALYZE ${rows.map((row) => `${schema}.${row.tablename}`).join(', ')}`);
  });
}

/** `count` groups created through the API, 50 requests at a time; their tokens, in order. */
async function createGroups(
  t: TestApp,
  token: string,
  count: number,
  body: (n: number) => Record<string, unknown>,
): Promise<string[]> {
  const tokens: string[] = [];
  for (let start = 0; start < count; start += 50) {
    const created = await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, (_, offset) =>
        inject(t.app, { method: 'GET', path: '/api/user', token, body: body(start + offset) }),
      ),
    );
    for (const response of created) {
      expect(response.status, response.raw).toBe(200);
      tokens.push(response.body.user_group.token);
    }
  }
  return tokens;
}

const databases: TestDatabase[] = [];
async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase('postgres');
  databases.push(db);
  return db;
}

afterAll(async () => {
  await stopAllServeProcesses();
  await Promise.all(databases.map((db) => db.drop()));
});

describe('hot reads on PostgreSQL without statistics', () => {
  it(`a fresh database seeded with ${GROUPS} groups through the API plans them as after ANALYZE`, async () => {
    const db = await database();
    const t = await createTestApp({ database: db });
    try {
      const token = t.tokens.default.Customer.write;
      const admin = t.tokens.default.Customer.admin;
      const schema = await inject(t.app, {
        method: 'POST',
        path: '/api/admin/schemas',
        token: admin,
        body: { name: 's' },
      });
      const schemaId = String(schema.body.schema.id);
      await inject(t.app, {
        method: 'POST',
        path: '/api/admin/data_sources',
        token: admin,
        body: { provided_id: 'ds', name: 'DS', schema_id: schema.body.schema.id },
      });
      const tokens = await createGroups(t, token, GROUPS, (n) => ({
        user_group_id: `g_${n}`,
        name: `G ${n}`,
        mapping: { [schemaId]: 'ds' },
      }));

      // The hot reads: get-or-create of existing groups and verify, several in one turn as under load.
      const hot = await statementsSentDuring(async () => {
        const reads = await Promise.all([
          ...[7, 700, 1400].map((n) =>
            inject(t.app, { method: 'GET', path: '/api/user', token, body: { user_group_id: `g_${n}` } }),
          ),
          ...[tokens[3]!, tokens[1999]!].map((groupToken) =>
            inject(t.app, { method: 'POST', path: '/api/user/verify', token, body: { token: groupToken } }),
          ),
        ]);
        for (const read of reads) expect(read.status, read.raw).toBe(200);
      });
      const lookups = hot.filter((statement) => /\bunnest\(/.test(statement.text));
      expect(lookups.length).toBe(2);

      const fresh = await plans(db, hot);
      await analyse(db);
      const analysed = await plans(db, hot);
      expect(fresh).toEqual(analysed);
      // And the plan is the one that reads one index entry per lookup.
      const lookupPlans = lookups.map((statement) => fresh.get(statement.name)!.join(' > '));
      expect(lookupPlans.some((plan) => plan.includes('Index Scan on user_groups_provided_id_key'))).toBe(true);
      expect(lookupPlans.some((plan) => plan.includes('Index Scan on user_groups_token_hash_key'))).toBe(true);
      for (const plan of lookupPlans) expect(plan).not.toContain('user_groups_tenant');
    } finally {
      await t.close();
    }
  }, 240_000);
});

describe('statistics and warnings', () => {
  it('ugs serve warns at start about autovacuum off and a missing public URL, not with --public-url', async () => {
    const db = await database();
    const [{ autovacuum }] = (await withPostgresClient((client) => client.query('SHOW autovacuum'))).rows as [
      { autovacuum: string },
    ];
    const bare = await startServeProcess(db);
    const log = bare.stdout() + bare.stderr();
    expect(log).toMatch(/no --public-url \(UGS_PUBLIC_URL\) on PostgreSQL/);
    if (autovacuum === 'off') expect(log).toMatch(/"level":40[^\n]*autovacuum is off on this PostgreSQL server/);
    else expect(log).not.toMatch(/autovacuum is off/);
    expect(await bare.stop()).toBe(0);

    const configured = await startServeProcess(db, { args: ['--public-url', 'https://ugs.example.com'] });
    expect(configured.stdout() + configured.stderr()).not.toMatch(/no --public-url/);
    expect(await configured.stop()).toBe(0);
  }, 120_000);

  it('ugs serve analyses tables bulk-loaded since their last ANALYZE and, with autovacuum off, says so and what to do', async () => {
    const db = await database();
    const schema = schemaOf(db);
    // Migrated (and analysed while empty), then 200 groups written: more than autovacuum's threshold.
    const t = await createTestApp({ database: db });
    try {
      await createGroups(t, t.tokens.default.Customer.write, 200, (n) => ({ user_group_id: `bulk_${n}` }));
    } finally {
      await t.close();
    }
    const columnStatistics = async () =>
      (
        await withPostgresClient((client) =>
          client.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stats WHERE schemaname = $1 AND tablename = 'user_groups'",
            [schema],
          ),
        )
      ).rows[0]!.n;
    const [{ autovacuum }] = (await withPostgresClient((client) => client.query('SHOW autovacuum'))).rows as [
      { autovacuum: string },
    ];
    if (autovacuum === 'off') expect(await columnStatistics()).toBe('0');

    const server = await startServeProcess(db, { args: ['--public-url', 'https://ugs.example.com'] });
    expect(await server.stop()).toBe(0);
    const log = server.stdout() + server.stderr();
    expect(Number(await columnStatistics())).toBeGreaterThan(0);
    if (autovacuum === 'off') {
      expect(log).toMatch(
        /"level":40[^\n]*stale planner statistics at start: [^\n]*user_groups \(\d+ rows changed\)[^\n]*analysed them now/,
      );
      expect(log).toMatch(
        /"level":40[^\n]*turn autovacuum on, or run VACUUM \(ANALYZE\) on the service's tables after every bulk load/,
      );
    } else expect(log).not.toMatch(/stale planner statistics/);

    // Nothing stale is left: the next start analyses nothing and says nothing about it.
    const again = await startServeProcess(db, { args: ['--public-url', 'https://ugs.example.com'] });
    expect(await again.stop()).toBe(0);
    expect(again.stdout() + again.stderr()).not.toMatch(/stale planner statistics/);
  }, 120_000);

  it('an import analyses the tables; a role that may not gets a warning and the import succeeds', async () => {
    const db = await database();
    const schema = schemaOf(db);
    const env = { UGS_ENCRYPTION_KEY: db.encryptionKey! };
    const file = join(db.dir, 'groups.jsonl');
    writeFileSync(file, `${JSON.stringify({ provided_id: 'imported_1', name: 'Imported 1' })}\n`);

    const owner = await runUgs(['groups', 'import', file, '--database', db.url], { env });
    expect(owner.code, owner.stderr).toBe(0);
    expect(owner.stderr).not.toMatch(/warning/);
    const analysed = await withPostgresClient((client) =>
      client.query<{ relname: string }>(
        'SELECT relname FROM pg_stat_user_tables WHERE schemaname = $1 AND last_analyze IS NOT NULL',
        [schema],
      ),
    );
    expect(analysed.rows.map((row) => row.relname)).toContain('user_groups');

    // A role with every privilege on the tables but owning none: ANALYZE skips them with a warning.
    const role = `ugs_t_${randomBytes(6).toString('hex')}`;
    await withPostgresClient(async (client) => {
      await client.query(`CREATE ROLE ${role} LOGIN`);
      await client.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${role}`);
      await client.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      await client.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`);
    });
    try {
      const url = new URL(db.url);
      url.username = role;
      writeFileSync(file, `${JSON.stringify({ provided_id: 'imported_2', name: 'Imported 2' })}\n`);
      const other = await runUgs(['groups', 'import', file, '--database', url.toString()], { env });
      expect(other.code, other.stderr).toBe(0);
      expect(other.stderr).toMatch(/ugs: warning: ANALYZE: .*only table or database owner can analyze it/);
    } finally {
      await withPostgresClient(async (client) => {
        await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${role}`);
        await client.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schema} FROM ${role}`);
        await client.query(`REVOKE USAGE, CREATE ON SCHEMA ${schema} FROM ${role}`);
        await client.query(`DROP ROLE ${role}`);
      });
    }
  }, 120_000);
});
