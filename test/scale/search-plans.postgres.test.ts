// The admin search and a group's audit trail at a size where a walk of the tenant costs (docs/performance.md,
// "Scale"): with statistics, a rare name substring is found through the trigram index OR-ed with the
// provided-id range, a common one by walking the tenant in team_id order until a page is full, and a
// group's trail through audit_events_team. Seeded in one INSERT … SELECT, not through the API.
import { afterAll, expect, it } from 'vitest';
import { searchSql } from '../../src/store/postgres/user-groups/reads.js';
import { inject } from '../support/http-client.js';
import { createTestApp } from '../support/test-app.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';

const GROUPS = 100_000;
/** One group in RARE_EVERY carries RARE in its name. */
const RARE = 'Quokka';
const RARE_EVERY = 20_000;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The plan's nodes depth first, each index scan (plain or bitmap) with its index. */
const nodes = (node: PlanNode): string[] => [
  `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`,
  ...(node.Plans ?? []).flatMap(nodes),
];

const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

it(`searches ${GROUPS} groups through the trigram index for a rare name substring, by walking them for a common one`, async () => {
  const db = await createTestDatabase('postgres');
  databases.push(db);
  const t = await createTestApp({ database: db });
  const schema = /search_path=(\w+)/.exec(decodeURIComponent(db.url))![1]!;
  try {
    const created = await inject(t.app, {
      method: 'GET',
      path: '/api/user',
      token: t.tokens.default.Customer.write,
      body: { user_group_id: 'first', name: 'First' },
    });
    expect(created.status, created.raw).toBe(200);

    await withPostgresClient(async (client) => {
      await client.query(`SET search_path = ${schema}`);
      await client.query(
        `INSERT INTO user_groups (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, created_at, updated_at)
        SELECT f.workspace_id, f.environment, 'g-' || n, CASE WHEN n % $2 = 0 THEN 'The ${RARE} ' || n ELSE 'Group ' || md5(n::text) END,
          'h-' || n, f.token_ciphertext, f.created_at, f.updated_at
        FROM user_groups f, generate_series(1, $1::int) n WHERE f.provided_id = 'first'`,
        [GROUPS, RARE_EVERY],
      );
      await client.query(
        `INSERT INTO audit_events (at, workspace_id, environment, actor_type, actor_name, action, team_id, provided_id, changes)
        SELECT now(), g.workspace_id, g.environment, 'api_token', 'seed', 'user_group.created', g.team_id, g.provided_id, '{}'
        FROM user_groups g`,
      );
      await client.query('ANALYZE user_groups, audit_events');

      const [{ workspace_id: workspaceId }] = (await client.query('SELECT workspace_id FROM user_groups LIMIT 1'))
        .rows as [{ workspace_id: string }];
      const searchPlan = async (search: string, searchEnd: string) => {
        const statement = searchSql.byTrigrams({
          workspaceId,
          environment: 'Customer',
          afterTeamId: 0,
          parent: null,
          tag: null,
          isDemoGroup: null,
          search,
          searchEnd,
          namePattern: `%${search}%`,
          limit: 50,
        });
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({
          text: `EXPLAIN (FORMAT JSON) ${statement.text}`,
          values: statement.values,
        });
        return nodes(rows[0]!['QUERY PLAN'][0]!.Plan);
      };

      const rare = await searchPlan(RARE.toLowerCase(), 'quokkb');
      expect(rare).toContain('BitmapOr');
      expect(rare).toContain('Bitmap Index Scan on user_groups_name_trigrams');
      expect(rare).toContain('Bitmap Index Scan on user_groups_provided_id_key');
      // Every name contains "group": the walk in team_id order finds a page at once.
      const common = await searchPlan('group', 'grouq');
      expect(common).not.toContain('Bitmap Index Scan on user_groups_name_trigrams');
      expect(common.join(' > ')).toMatch(/^Limit > Index Scan on user_groups_(pkey|tenant)/);

      const [{ team_id: teamId }] = (await client.query(`SELECT team_id FROM user_groups WHERE provided_id = 'g-77'`))
        .rows as [{ team_id: string }];
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM audit_events WHERE workspace_id = $1 AND team_id = $2 AND id < $3 ORDER BY id DESC LIMIT 50`,
        [workspaceId, teamId, Number.MAX_SAFE_INTEGER],
      );
      expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('audit_events_team');
    });

    // And the service answers both through them.
    const found = await inject(t.app, {
      method: 'GET',
      path: `/api/admin/user_groups?q=${RARE}`,
      token: t.tokens.default.Customer.admin,
    });
    expect(found.status, found.raw).toBe(200);
    expect(found.body.user_groups.map((group: { name: string }) => group.name)).toEqual(
      Array.from({ length: GROUPS / RARE_EVERY }, (_, i) => `The ${RARE} ${(i + 1) * RARE_EVERY}`),
    );
  } finally {
    await t.close();
  }
}, 120_000);
