// `ugs audit list`: CLI changes recorded with actor `cli`, newest first, and each filter on its own
// and together, checked against the unfiltered list of the same database.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanUp,
  createDataSource,
  createSchema,
  type Environment,
  importGroups,
  type Sandbox,
  sandbox,
} from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { getOrCreate } from '../support/user-group-api.js';

// The history below is built once and only read by the tests.
afterAll(cleanUp);

interface AuditEvent {
  id: number;
  at: string;
  environment: Environment | null;
  actor: string;
  action: string;
  team_id: number | null;
  provided_id: string | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  request_id: string | null;
}

const auditList = async (box: Sandbox, ...flags: string[]) =>
  jsonOutput<AuditEvent[]>(await box.ugs('audit', 'list', '--json', '--limit', '1000', ...flags));

describe('ugs audit list', { timeout: 60_000 }, () => {
  const groupToken = `ugt_${'b'.repeat(64)}`;
  let box: Sandbox;
  let apiTokenSecret: string;
  /** Every event of the history, as `audit list --json` gives it unfiltered. */
  let all: AuditEvent[];
  const teamIdOf = (providedId: string) => all.find((event) => event.provided_id === providedId)?.team_id;

  /** Each step is its own process, so each later step's events carry a later time. */
  beforeAll(async () => {
    box = sandbox();
    const sales = await createSchema(box, 'sales');
    const dataSource = await createDataSource(box, {
      providedId: 'warehouse',
      schemaId: sales,
      environment: 'Customer',
    });
    await importGroups(box, [
      { provided_id: 'alpha', name: 'Alpha', mapping: { [sales]: 'warehouse' } },
      { provided_id: 'beta', name: 'Beta', api_environment_tag: 'Testing' },
    ]);
    await importGroups(box, [{ provided_id: 'alpha', name: 'Alpha renamed' }]);
    await importGroups(box, [{ provided_id: 'alpha', token: groupToken }], '--replace-tokens');
    apiTokenSecret = jsonOutput<{ token: string }>(
      await box.ugs('tokens', 'create', '--environment', 'Testing', '--scope', 'read', '--json'),
    ).token;
    expect((await box.ugs('data-sources', 'update', String(dataSource), '--name', 'Main warehouse')).code).toBe(0);
    all = await auditList(box);
  }, 60_000);

  it('lists every change newest first, by actor cli, with its changes and never a token', async () => {
    expect(all.map((event) => [event.action, event.environment, event.provided_id])).toEqual([
      ['data_source.updated', 'Customer', 'warehouse'],
      ['api_token.created', 'Testing', null],
      ['user_group.token_rotated', 'Customer', 'alpha'],
      ['user_group.updated', 'Customer', 'alpha'],
      ['user_group.created', 'Testing', 'beta'],
      ['user_group.created', 'Customer', 'alpha'],
      ['data_source.created', 'Customer', 'warehouse'],
      ['schema.created', null, null],
      ['workspace.created', null, null],
    ]);
    const ids = all.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const times = all.map((event) => event.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(new Set(all.map((event) => event.actor))).toEqual(new Set(['cli']));
    expect(all.every((event) => event.request_id === null)).toBe(true);

    expect(all[3]?.changes).toEqual({ name: { before: 'Alpha', after: 'Alpha renamed' } });
    // A replaced token is a rotation, audited as the API's are: no changes recorded, the token never.
    expect(all[2]?.changes).toBeNull();
    expect(all[0]?.changes).toEqual({ name: { before: 'warehouse', after: 'Main warehouse' } });
    const text = JSON.stringify(all);
    expect(text).not.toContain(groupToken);
    expect(text).not.toContain(apiTokenSecret);
    expect(text).not.toMatch(/ugt_[0-9a-f]{64}|ugs_(live|test)_/);
  });

  it('prints a table by default, newest first, with the actor and without the changes', async () => {
    const table = await box.ugs('audit', 'list');
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^id\s+at\s+environment\s+actor\s+action\s+team_id\s+provided_id$/);
    expect(rows).toHaveLength(all.length);
    expect(rows[0]).toMatch(
      new RegExp(`^${all[0]!.id}\\s+${all[0]!.at}\\s+Customer\\s+cli\\s+data_source\\.updated\\s+warehouse$`),
    );
    expect(rows.at(-1)).toMatch(/^\d+\s+\S+\s+cli\s+workspace\.created$/);
    expect(table.stdout).not.toMatch(/before|after|ugt_/);
  });

  it('--action, --team-id, --environment and --limit keep just the matching events, newest first', async () => {
    const alpha = teamIdOf('alpha');
    const cases: Array<[string[], (event: AuditEvent) => boolean]> = [
      [['--action', 'user_group.updated'], (event) => event.action === 'user_group.updated'],
      [['--team-id', String(alpha)], (event) => event.team_id === alpha],
      [['--environment', 'Testing'], (event) => event.environment === 'Testing'],
      [
        ['--environment', 'Customer', '--action', 'user_group.created'],
        (event) => event.environment === 'Customer' && event.action === 'user_group.created',
      ],
      [['--action', 'user_group.deleted'], () => false],
    ];
    const filtered = await Promise.all(cases.map(([flags]) => auditList(box, ...flags)));
    expect(filtered).toEqual(cases.map(([, keep]) => all.filter(keep)));
    expect(filtered[1]!.map((event) => event.action)).toEqual([
      'user_group.token_rotated',
      'user_group.updated',
      'user_group.created',
    ]);
    expect(filtered[2]!.map((event) => event.action)).toEqual(['api_token.created', 'user_group.created']);

    expect(jsonOutput(await box.ugs('audit', 'list', '--json', '--limit', '2'))).toEqual(all.slice(0, 2));
  });

  it('--since is inclusive and --until exclusive, alone, together and with a time zone offset', async () => {
    const renamed = all[3]!; // the rename of alpha, a step of its own
    const tokenChange = all[2]!;
    const shifted = new Date(Date.parse(renamed.at) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const cases: Array<[string[], (event: AuditEvent) => boolean]> = [
      [['--since', renamed.at], (event) => event.at >= renamed.at],
      [['--until', renamed.at], (event) => event.at < renamed.at],
      [
        ['--since', renamed.at, '--until', tokenChange.at],
        (event) => event.at >= renamed.at && event.at < tokenChange.at,
      ],
      [['--since', shifted], (event) => event.at >= renamed.at],
      [
        ['--since', renamed.at, '--environment', 'Testing'],
        (event) => event.at >= renamed.at && event.environment === 'Testing',
      ],
    ];
    const filtered = await Promise.all(cases.map(([flags]) => auditList(box, ...flags)));
    expect(filtered).toEqual(cases.map(([, keep]) => all.filter(keep)));
    expect(filtered[2]).toEqual([renamed]);
    expect(filtered[0]!.length).toBeGreaterThan(1);
    expect(filtered[1]!.length).toBeGreaterThan(1);
  });

  it('a filter value that is not a time, a number or an environment fails on stderr', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--since', 'yesterday'], /yesterday/],
      [['--until', '2026-13-45'], /2026-13-45/],
      [['--team-id', 'alpha'], /alpha/],
      [['--environment', 'Production'], /Production/],
      [['--limit', '0'], /"0"/],
    ];
    const results = await Promise.all(cases.map(([flags]) => box.ugs('audit', 'list', ...flags)));
    results.forEach((result, index) => expectCleanFailure(result, cases[index]![1]));
  });
});

describe('ugs audit list with a server on the same database', { timeout: 60_000 }, () => {
  it('names the API token of an API change and cli for a CLI change', async () => {
    const box = sandbox();
    const server = await box.serve();
    const { Customer: token } = server.adminTokens();
    expect((await getOrCreate(server, token, { user_group_id: 'from-api' })).status).toBe(200);
    await importGroups(box, [{ provided_id: 'from-api', name: 'Renamed by the CLI' }]);
    expect(await server.stop()).toBe(0);

    const apiToken = jsonOutput<Array<{ id: number; name: string; environment: string }>>(
      await box.ugs('tokens', 'list', '--json'),
    ).find((listed) => listed.environment === 'Customer');
    const events = await auditList(box, '--action', 'user_group.created');
    expect(events).toEqual([
      expect.objectContaining({
        provided_id: 'from-api',
        actor: `api_token:${apiToken?.id} (${apiToken?.name})`,
        request_id: expect.any(String),
      }),
    ]);
    const updates = await auditList(box, '--team-id', String(events[0]?.team_id), '--action', 'user_group.updated');
    expect(updates).toEqual([
      expect.objectContaining({ actor: 'cli', changes: { name: { before: 'from-api', after: 'Renamed by the CLI' } } }),
    ]);
    const table = await box.ugs('audit', 'list', '--action', 'user_group.created');
    expect(table.stdout).toContain(`api_token:${apiToken?.id} (${apiToken?.name})`);
  });
});

describe('ugs audit list --person', { timeout: 60_000 }, () => {
  const STAFF = 'https://idp.example.com/realms/staff';
  const OTHER = 'https://other.example.com';

  it("keeps one person's console changes, matched on (issuer, sub) and never on email, as the admin API does", async () => {
    const box = sandbox();
    await createSchema(box, 'sales'); // a migrated database with its workspace
    // People's changes come through the console (a server and an identity provider): written
    // straight here, as the console's requests would have, with the columns the store writes.
    const db = new Database(box.databasePath);
    const workspace = (db.prepare('SELECT min(id) AS id FROM workspaces').get() as { id: number }).id;
    const insert = db.prepare(`INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_name, actor_issuer, actor_subject, action, provided_id)
      VALUES (?, ?, 'Customer', 'person', ?, ?, ?, 'user_group.updated', ?)`);
    insert.run('2026-11-01T10:00:00.000Z', workspace, 'ada@example.com', STAFF, 'ada', 'by-ada');
    insert.run('2026-11-01T10:01:00.000Z', workspace, 'ada@example.com', OTHER, 'ada', 'by-other-ada');
    insert.run('2026-11-01T10:02:00.000Z', workspace, 'ada@example.com', STAFF, 'grace', 'by-grace');
    insert.run('2026-11-01T10:03:00.000Z', workspace, 'ada2@example.com', STAFF, 'ada', 'by-ada-again');
    db.close();

    const byAda = ['by-ada-again', 'by-ada'];
    for (const person of [`${STAFF} ada`, `${STAFF}/ada`, `  ${STAFF}   ada `]) {
      const events = await auditList(box, '--person', person);
      expect(events.map((event) => event.provided_id)).toEqual(byAda);
      expect(events[0]!.actor).toBe(`person:${STAFF} ada (ada2@example.com)`);
    }
    expect((await auditList(box, '--person', `${OTHER}/ada`)).map((event) => event.provided_id)).toEqual([
      'by-other-ada',
    ]);
    // A sub with a "/" in it, given with white space; a person with no events.
    expect(await auditList(box, '--person', `${STAFF} a/da`)).toEqual([]);
    expect(
      (await auditList(box, '--person', `${STAFF}/ada`, '--since', '2026-11-01T10:02:00Z')).map(
        (event) => event.provided_id,
      ),
    ).toEqual(['by-ada-again']);

    const refusals = await Promise.all(
      ['ada', 'ada@example.com', `${STAFF}/`, 'idp.example.com/ada'].map((person) =>
        box.ugs('audit', 'list', '--person', person),
      ),
    );
    for (const refusal of refusals) expectCleanFailure(refusal, /is not a person/);
  });
});
