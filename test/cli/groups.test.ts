// `ugs groups list|show|export|import` against real SQLite files: a round trip
// of 10 000 groups between databases, reruns that change nothing, bad lines, stdin and --environment.
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditEventCount,
  cleanUp,
  createDataSource,
  createSchema,
  type Environment,
  type ExportedGroup,
  exportGroups,
  importFile,
  importGroups,
  type ImportSummary,
  type Sandbox,
  sandbox,
} from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { writeJsonLines } from '../support/json-lines.js';

// The round trip's databases are built once in beforeAll, so temp dirs go at the end of the file.
afterAll(cleanUp);

const USER_GROUP_TOKEN = /^ugt_[0-9a-f]{64}$/;

/** The schemas and data sources a database needs before groups can map to them. */
interface Catalog {
  sales: number;
  region: number;
  /** Data source ids; the provided ids are `warehouse` (in both environments) and `eu` (Customer only). */
  warehouse: Record<Environment, number>;
  eu: number;
}

/**
 * Creates the same schemas (so the same schema ids) and data sources (by provided id) in every
 * database; `reordered` creates the data sources in another order and with an extra one first, so
 * that their ids differ from the first database's.
 */
async function prepareCatalog(box: Sandbox, { reordered = false } = {}): Promise<Catalog> {
  const sales = await createSchema(box, 'sales');
  const region = await createSchema(box, 'region');
  const warehouse = (environment: Environment) =>
    createDataSource(box, { providedId: 'warehouse', schemaId: sales, environment });
  const eu = () => createDataSource(box, { providedId: 'eu', schemaId: region, environment: 'Customer' });
  if (!reordered) {
    const customer = await warehouse('Customer');
    return { sales, region, warehouse: { Customer: customer, Testing: await warehouse('Testing') }, eu: await eu() };
  }
  await createDataSource(box, { providedId: 'unused', schemaId: sales, environment: 'Testing' });
  const euId = await eu();
  const testing = await warehouse('Testing');
  return { sales, region, warehouse: { Customer: await warehouse('Customer'), Testing: testing }, eu: euId };
}

/** Just schema `sales` and data source `warehouse` in each environment, for the small tests. */
async function salesCatalog(box: Sandbox): Promise<Pick<Catalog, 'sales' | 'warehouse'>> {
  const sales = await createSchema(box, 'sales');
  const [customer, testing] = await Promise.all(
    (['Customer', 'Testing'] as const).map((environment) =>
      createDataSource(box, { providedId: 'warehouse', schemaId: sales, environment }),
    ),
  );
  return { sales, warehouse: { Customer: customer!, Testing: testing! } };
}

/** An export keyed by environment and provided id, without the fields that are local to one database. */
function portable(groups: ExportedGroup[]): Map<string, Omit<ExportedGroup, 'team_id' | 'created_at' | 'updated_at'>> {
  const byKey = new Map(
    groups.map(({ team_id: _teamId, created_at: _createdAt, updated_at: _updatedAt, ...group }) => [
      keyOf(group),
      group,
    ]),
  );
  expect(byKey.size, 'each environment and provided id once').toBe(groups.length);
  return byKey;
}

const keyOf = (group: { api_environment_tag?: string; provided_id: string | number }) =>
  `${group.api_environment_tag}/${group.provided_id}`;

const withoutToken = <T extends { token?: string }>({ token: _token, ...rest }: T) => rest;

describe('export and import of 10 000 groups', { timeout: 60_000 }, () => {
  const GROUPS = 10_000;

  /**
   * Source line `i`: both environments, integer and string provided ids, with and without a name,
   * properties absent, null or nested, and mappings naming data sources by provided id or by id.
   */
  function sourceLine(i: number, catalog: Catalog): Record<string, unknown> {
    const environment: Environment = i % 3 === 0 ? 'Testing' : 'Customer';
    const mappings = [
      undefined,
      { [catalog.sales]: 'warehouse' },
      { [catalog.sales]: catalog.warehouse[environment] },
      environment === 'Customer' ? { [catalog.sales]: String(catalog.warehouse.Customer), [catalog.region]: 'eu' } : {},
    ];
    const properties = [
      undefined,
      null,
      { tier: i % 7, tags: ['a', `t${i}`], nested: { on: i % 2 === 0, note: 'ünïcødé ✓' } },
    ];
    return {
      provided_id: i % 10 === 7 ? i : `group-${i}`,
      ...(i % 11 === 0 ? {} : { name: `Group ${i} – ${environment}` }),
      ...(properties[i % 3 === 0 ? 2 : (i % 5) % 3] === undefined
        ? {}
        : { properties: properties[i % 3 === 0 ? 2 : (i % 5) % 3] }),
      ...(mappings[i % 4] === undefined ? {} : { mapping: mappings[i % 4] }),
      api_environment_tag: environment,
    };
  }

  let source: Sandbox;
  let catalog: Catalog;
  let withTokens: Awaited<ReturnType<typeof exportGroups>>;
  let withoutTokens: Awaited<ReturnType<typeof exportGroups>>;
  /** An empty database with the same catalog (other data source ids) into which `withTokens` was imported. */
  let copy: Sandbox;
  let copyCatalog: Catalog;
  let copyImport: ImportSummary;
  /** Another one like it, still without groups. */
  let empty: Sandbox;

  beforeAll(async () => {
    [source, copy, empty] = [sandbox(), sandbox(), sandbox()];
    [catalog, copyCatalog] = await Promise.all([
      prepareCatalog(source),
      prepareCatalog(copy, { reordered: true }),
      prepareCatalog(empty, { reordered: true }),
    ]);
    const sourceFile = join(source.dir, 'source.jsonl');
    writeJsonLines(
      sourceFile,
      Array.from({ length: GROUPS }, (_, i) => sourceLine(i, catalog)),
    );
    expect(await importFile(source, sourceFile)).toEqual({ created: GROUPS, updated: 0, unchanged: 0, rejected: [] });
    [withTokens, withoutTokens] = await Promise.all([exportGroups(source, '--include-tokens'), exportGroups(source)]);
    copyImport = await importFile(copy, withTokens.path);
  }, 120_000);

  it('the export has every group once, names data sources by provided id, and has tokens only with --include-tokens', () => {
    const groups = withTokens.groups;
    expect(groups).toHaveLength(GROUPS);
    expect(portable(groups).size).toBe(GROUPS);
    expect(groups.filter((group) => group.api_environment_tag === 'Testing')).toHaveLength(Math.ceil(GROUPS / 3));
    expect(groups.every((group) => USER_GROUP_TOKEN.test(group.token ?? ''))).toBe(true);
    expect(new Set(groups.map((group) => group.token)).size).toBe(GROUPS);
    // A file with tokens is a secret: readable by its owner only.
    expect((statSync(withTokens.path).mode & 0o777).toString(8)).toBe('600');

    const byKey = portable(groups);
    // Mapped by provided id, by id and by digit string in the source: always exported by provided id.
    expect(byKey.get('Customer/group-1')).toMatchObject({
      name: 'Group 1 – Customer',
      mapping: { [catalog.sales]: 'warehouse' },
    });
    expect(byKey.get('Customer/group-2')).toMatchObject({ mapping: { [catalog.sales]: 'warehouse' } });
    expect(byKey.get('Testing/group-6')).toMatchObject({ mapping: { [catalog.sales]: 'warehouse' } });
    expect(byKey.get('Customer/group-11')).toMatchObject({
      mapping: { [catalog.sales]: 'warehouse', [catalog.region]: 'eu' },
    });
    expect(byKey.get('Testing/group-3')).toMatchObject({
      mapping: {},
      properties: { tier: 3, tags: ['a', 't3'], nested: { on: false, note: 'ünïcødé ✓' } },
    });
    expect(byKey.get('Customer/7')).toMatchObject({ provided_id: '7', name: 'Group 7 – Customer' });
    expect(byKey.get('Testing/group-33')).toMatchObject({ name: 'group-33' }); // no name: the provided id
    const mappedTo = new Set(groups.flatMap((group) => Object.values(group.mapping)));
    expect(mappedTo).toEqual(new Set(['warehouse', 'eu']));

    expect(withoutTokens.groups.some((group) => 'token' in group)).toBe(false);
    expect(withoutTokens.text).not.toMatch(/ugt_/);
    expect(withoutTokens.groups).toEqual(groups.map(withoutToken));
  });

  it('imported into an empty database with the same catalog, it gives the same groups with the same tokens', async () => {
    expect(copyImport).toEqual({ created: GROUPS, updated: 0, unchanged: 0, rejected: [] });
    const copied = await exportGroups(copy, '--include-tokens');
    expect(portable(copied.groups)).toEqual(portable(withTokens.groups));

    // The copy maps to its own data sources, whose ids differ from the source's.
    expect(copyCatalog.warehouse).not.toEqual(catalog.warehouse);
    const shown = jsonOutput<{ mapping: Record<string, string>; token: string }>(
      await copy.ugs('groups', 'show', 'group-11', '--json'),
    );
    expect(shown.mapping).toEqual({
      [copyCatalog.sales]: String(copyCatalog.warehouse.Customer),
      [copyCatalog.region]: String(copyCatalog.eu),
    });
    expect(shown.token).toBe(portable(withTokens.groups).get('Customer/group-11')?.token);
  });

  it('rerunning the import changes nothing: all unchanged, no audit event, the same export', async () => {
    const before = await exportGroups(copy, '--include-tokens');
    const events = auditEventCount(copy);

    expect(await importFile(copy, withTokens.path)).toEqual({
      created: 0,
      updated: 0,
      unchanged: GROUPS,
      rejected: [],
    });
    expect(auditEventCount(copy)).toBe(events);
    expect((await exportGroups(copy, '--include-tokens')).text).toBe(before.text);

    // The plain summary says the same.
    const plain = await copy.ugs('groups', 'import', withTokens.path);
    expect(plain).toEqual({ code: 0, stdout: `created 0, updated 0, unchanged ${GROUPS}, rejected 0\n`, stderr: '' });
    expect(auditEventCount(copy)).toBe(events);
  });

  it('an import of the file with some names edited updates exactly those groups', async () => {
    const edited = withTokens.groups.map((group, index) =>
      index % 400 === 0 ? { ...group, name: `${group.name} (renamed)` } : group,
    );
    const editedKeys = edited.filter((group) => group.name.endsWith('(renamed)')).map(keyOf);
    expect(new Set(editedKeys.map((key) => key.split('/')[0]))).toEqual(new Set(['Customer', 'Testing']));
    const events = auditEventCount(source);

    expect(await importGroups(source, edited)).toEqual({
      created: 0,
      updated: editedKeys.length,
      unchanged: GROUPS - editedKeys.length,
      rejected: [],
    });
    expect(auditEventCount(source)).toBe(events + editedKeys.length);

    type Event = { action: string; environment: string; provided_id: string; changes: unknown };
    const updates = jsonOutput<Event[]>(
      await source.ugs('audit', 'list', '--action', 'user_group.updated', '--limit', '1000', '--json'),
    );
    expect(updates.map((event) => `${event.environment}/${event.provided_id}`).sort()).toEqual([...editedKeys].sort());
    const original = portable(withTokens.groups);
    for (const event of updates) {
      const name = original.get(`${event.environment}/${event.provided_id}`)?.name;
      expect(event.changes).toEqual({ name: { before: name, after: `${name} (renamed)` } });
    }
    const after = portable((await exportGroups(source, '--include-tokens')).groups);
    expect(after).toEqual(portable(edited));
  });

  it('an export without tokens imports as the same groups with new tokens; rerunning it keeps them', async () => {
    const target = empty;
    expect(await importFile(target, withoutTokens.path)).toEqual({
      created: GROUPS,
      updated: 0,
      unchanged: 0,
      rejected: [],
    });

    const imported = (await exportGroups(target, '--include-tokens')).groups;
    expect(imported.every((group) => USER_GROUP_TOKEN.test(group.token ?? ''))).toBe(true);
    expect(new Set(imported.map((group) => group.token)).size).toBe(GROUPS);
    const sourceTokens = new Set(withTokens.groups.map((group) => group.token));
    expect(imported.filter((group) => sourceTokens.has(group.token))).toEqual([]);
    expect(portable(imported.map(withoutToken))).toEqual(portable(withoutTokens.groups));

    const events = auditEventCount(target);
    expect(await importFile(target, withoutTokens.path)).toEqual({
      created: 0,
      updated: 0,
      unchanged: GROUPS,
      rejected: [],
    });
    expect(auditEventCount(target)).toBe(events);
    expect((await exportGroups(target, '--include-tokens')).groups).toEqual(imported);
  });
});

describe('an import file with bad lines', { timeout: 60_000 }, () => {
  const token = (digit: string) => `ugt_${digit.repeat(64)}`;

  /** Good and bad lines interleaved; `bad` is what each bad line's reason must mention. */
  function mixedFile(catalog: Pick<Catalog, 'sales'>): {
    lines: unknown[];
    good: string[];
    bad: Array<{ line: number; reason: RegExp }>;
  } {
    const lines: unknown[] = [
      {
        provided_id: 'good-1',
        name: 'Good one',
        properties: { plan: 'gold' },
        mapping: { [catalog.sales]: 'warehouse' },
      },
      '{"provided_id": "broken-json", "name": ',
      { provided_id: 42, api_environment_tag: 'Testing' },
      { provided_id: 'bad-unknown-field', colour: 'red' },
      '',
      { provided_id: 'bad-long-name', name: 'n'.repeat(257) },
      { provided_id: 'good-256', name: 'n'.repeat(256) },
      { provided_id: 'bad-properties', properties: ['a', 'b'] },
      { provided_id: 'bad-mapping', mapping: { [catalog.sales]: 'nowhere' } },
      { provided_id: 'bad-token', token: 'ugt_1234' },
      { provided_id: 'good-token', token: token('a') },
      { provided_id: 'bad-taken-token', token: token('a') },
    ];
    return {
      lines,
      good: ['Customer/good-1', 'Testing/42', 'Customer/good-256', 'Customer/good-token'],
      bad: [
        { line: 2, reason: /JSON/ },
        { line: 4, reason: /colour/ },
        { line: 6, reason: /name.*256/ },
        { line: 8, reason: /properties/ },
        { line: 9, reason: /nowhere/ },
        { line: 10, reason: /token/ },
        { line: 12, reason: /token/ },
      ],
    };
  }

  it('imports the good lines, reports each bad one by line number and reason, exits 2 and stores nothing of them', async () => {
    const box = sandbox();
    const { lines, good, bad } = mixedFile(await salesCatalog(box));
    const file = join(box.dir, 'mixed.jsonl');
    writeJsonLines(file, lines);
    const events = auditEventCount(box);

    const plain = await box.ugs('groups', 'import', file);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toBe('');
    const [summaryLine, ...reasons] = plain.stdout.trimEnd().split('\n');
    expect(summaryLine).toBe(`created ${good.length}, updated 0, unchanged 0, rejected ${bad.length}`);
    expect(reasons).toHaveLength(bad.length);
    bad.forEach(({ line, reason }, index) =>
      expect(reasons[index]).toMatch(new RegExp(`^ {2}line ${line}: .*${reason.source}`)),
    );

    const exported = (await exportGroups(box, '--include-tokens')).groups;
    expect(exported.map(keyOf).sort()).toEqual([...good].sort());
    expect(exported.find((group) => group.provided_id === 'good-token')?.token).toBe(token('a'));
    expect(auditEventCount(box)).toBe(events + good.length);

    // Again, as JSON: the good lines are now unchanged and the same lines are rejected.
    const json = await box.ugs('groups', 'import', file, '--json');
    expect(json).toMatchObject({ code: 2, stderr: '' });
    const summary = JSON.parse(json.stdout) as ImportSummary;
    expect(summary).toEqual({
      created: 0,
      updated: 0,
      unchanged: good.length,
      rejected: bad.map(({ line }) => ({ line, reason: expect.any(String) })),
    });
    summary.rejected.forEach(({ reason }, index) => expect(reason).toMatch(bad[index]!.reason));
    expect(auditEventCount(box)).toBe(events + good.length);
  });
});

describe('groups list and show', { timeout: 60_000 }, () => {
  let box: Sandbox;
  let catalog: Pick<Catalog, 'sales' | 'warehouse'>;
  /** team_id by provided id. */
  const teamIds = new Map<string, number>();

  beforeAll(async () => {
    box = sandbox();
    catalog = await salesCatalog(box);
    await importGroups(box, [
      {
        provided_id: 'acme-1',
        name: 'Acme Widgets',
        properties: { plan: 'gold' },
        mapping: { [catalog.sales]: 'warehouse' },
      },
      { provided_id: 'acme-2', name: 'Acme Gadgets' },
      { provided_id: 'beta', name: 'Beta Widgets Ltd' },
      { provided_id: 'x-delta', name: 'Fourth' },
      { provided_id: 'acme-staging', name: 'Acme Staging', api_environment_tag: 'Testing' },
    ]);
    const lists = await Promise.all(
      ['Customer', 'Testing'].map((environment) => box.ugs('groups', 'list', '--environment', environment, '--json')),
    );
    for (const row of lists.flatMap((list) => jsonOutput<Array<{ team_id: number; provided_id: string }>>(list)))
      teamIds.set(row.provided_id, row.team_id);
  }, 60_000);

  const listIds = async (...flags: string[]) =>
    jsonOutput<Array<{ provided_id: string }>>(await box.ugs('groups', 'list', '--json', ...flags)).map(
      (row) => row.provided_id,
    );

  it('lists the Customer groups in team_id order, as a table and as JSON', async () => {
    const rows = jsonOutput<Array<Record<string, unknown>>>(await box.ugs('groups', 'list', '--json'));
    expect(rows.map((row) => row.provided_id)).toEqual(['acme-1', 'acme-2', 'beta', 'x-delta']);
    expect(rows.map((row) => row.team_id)).toEqual([...rows.map((row) => row.team_id as number)].sort((a, b) => a - b));
    expect(rows[0]).toEqual({
      team_id: teamIds.get('acme-1'),
      provided_id: 'acme-1',
      name: 'Acme Widgets',
      parent_user_group_id: null,
      is_demo_group: false,
      tags: [],
      access_rules: 0,
      environment: 'Customer',
      updated_at: expect.any(String),
    });

    const table = await box.ugs('groups', 'list');
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const [header, ...lines] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^team_id\s+provided_id\s+name\s+parent_user_group_id\s+is_demo_group\s+tags\s+access_rules\s+environment\s+updated_at$/,
    );
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      // No tags: an empty cell, not JSON's [].
      new RegExp(`^${teamIds.get('acme-1')}\\s+acme-1\\s+Acme Widgets\\s+false\\s+0\\s+Customer\\s+\\d{4}-`),
    );
  });

  it('--q matches a provided-id prefix or a name substring, --limit keeps the first, --environment picks the other', async () => {
    const cases: Array<[string[], string[]]> = [
      [
        ['--q', 'acme'],
        ['acme-1', 'acme-2'],
      ],
      [
        ['--q', 'Widgets'],
        ['acme-1', 'beta'],
      ],
      [['--q', 'our'], ['x-delta']],
      [['--q', 'delta'], []], // inside the provided id, but not its prefix
      [
        ['--limit', '2'],
        ['acme-1', 'acme-2'],
      ],
      [['--environment', 'Testing'], ['acme-staging']],
      [['--environment', 'Testing', '--q', 'acme'], ['acme-staging']],
    ];
    const found = await Promise.all(cases.map(([flags]) => listIds(...flags)));
    expect(found).toEqual(cases.map(([, ids]) => ids));
    expect(await box.ugs('groups', 'list', '--q', 'nothing-like-this')).toEqual({
      code: 0,
      stdout: '(none)\n',
      stderr: '',
    });
  });

  it('shows the whole group with its token by provided id or --team-id, as pretty JSON or one line', async () => {
    const [json, pretty, byTeamId, testing, exported] = await Promise.all([
      box.ugs('groups', 'show', 'acme-1', '--json'),
      box.ugs('groups', 'show', 'acme-1'),
      box.ugs('groups', 'show', '--team-id', String(teamIds.get('acme-1')), '--json'),
      box.ugs('groups', 'show', 'acme-staging', '--environment', 'Testing', '--json'),
      exportGroups(box, '--include-tokens'),
    ]);
    const shown = jsonOutput<Record<string, unknown>>(json);
    expect(shown).toEqual({
      team_id: teamIds.get('acme-1'),
      token: expect.stringMatching(USER_GROUP_TOKEN),
      name: 'Acme Widgets',
      provided_id: 'acme-1',
      properties: { plan: 'gold' },
      mapping: { [catalog.sales]: String(catalog.warehouse.Customer) },
      parent_user_group_id: null,
      computed_properties: { plan: 'gold' },
      computed_mapping: { [catalog.sales]: String(catalog.warehouse.Customer) },
      is_demo_group: false,
      tags: [],
      access_rules: [],
      computed_access_rules: [],
      api_environment_tag: 'Customer',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(shown.token).toBe(exported.groups.find((group) => group.provided_id === 'acme-1')?.token);

    expect(pretty).toMatchObject({ code: 0, stderr: '' });
    expect(pretty.stdout.split('\n').length).toBeGreaterThan(3);
    expect(JSON.parse(pretty.stdout)).toEqual(shown);

    expect(jsonOutput(byTeamId)).toEqual(shown);
    expect(jsonOutput(testing)).toMatchObject({
      provided_id: 'acme-staging',
      api_environment_tag: 'Testing',
    });
  });

  it('show of an unknown group, or of one in the other environment, fails on stderr', async () => {
    const staging = String(teamIds.get('acme-staging'));
    const cases: Array<[string[], RegExp]> = [
      [['no-such-group'], /no-such-group/],
      [['--team-id', '99999'], /99999/],
      [['acme-staging'], /acme-staging/], // a Testing group, and Customer is the default
      [['--team-id', staging], new RegExp(`\\b${staging}\\b`)],
      [[], /provided id|team-id/],
    ];
    const results = await Promise.all(cases.map(([args]) => box.ugs('groups', 'show', ...args)));
    results.forEach((result, index) => expectCleanFailure(result, cases[index]![1]));
  });
});

describe('import from stdin and --environment', { timeout: 60_000 }, () => {
  it('reads stdin for "-", silently apart from the summary, and puts untagged lines in Customer', async () => {
    const box = sandbox();
    const input = [
      { provided_id: 'piped-1' },
      { provided_id: 'piped-2', name: 'Two' },
      { provided_id: 'piped-3', api_environment_tag: 'Testing' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');
    const result = await box.ugsWithStdin(`${input}\n`, 'groups', 'import', '-');
    expect(result).toEqual({ code: 0, stdout: 'created 3, updated 0, unchanged 0, rejected 0\n', stderr: '' });

    const exported = (await exportGroups(box)).groups;
    expect(exported.map(keyOf)).toEqual(['Customer/piped-1', 'Customer/piped-2', 'Testing/piped-3']);
    expect(exported.find((group) => group.provided_id === 'piped-2')).toMatchObject({ name: 'Two' });

    // The same input again, as JSON: nothing changes.
    expect(jsonOutput(await box.ugsWithStdin(input, 'groups', 'import', '-', '--json'))).toEqual({
      created: 0,
      updated: 0,
      unchanged: 3,
      rejected: [],
    });
  });

  it('--environment Testing puts every line in Testing, whatever its tag, and resolves mappings there', async () => {
    const box = sandbox();
    const catalog = await salesCatalog(box);
    const lines = [
      { provided_id: 'one', api_environment_tag: 'Customer', mapping: { [catalog.sales]: 'warehouse' } },
      { provided_id: 'two' },
      { provided_id: 'three', api_environment_tag: 'Testing' },
    ];
    expect(await importGroups(box, lines, '--environment', 'Testing')).toEqual({
      created: 3,
      updated: 0,
      unchanged: 0,
      rejected: [],
    });

    const [customerList, testing, customer, one] = await Promise.all([
      box.ugs('groups', 'list', '--json'),
      exportGroups(box, '--environment', 'Testing'),
      exportGroups(box, '--environment', 'Customer'),
      box.ugs('groups', 'show', 'one', '--environment', 'Testing', '--json'),
    ]);
    expect(jsonOutput(customerList)).toEqual([]);
    expect(customer.groups).toEqual([]);
    expect(testing.groups.map(keyOf)).toEqual(['Testing/one', 'Testing/two', 'Testing/three']);
    expect(testing.groups[0]?.mapping).toEqual({ [catalog.sales]: 'warehouse' });
    expect(jsonOutput<{ mapping: Record<string, string> }>(one).mapping).toEqual({
      [catalog.sales]: String(catalog.warehouse.Testing),
    });

    // Through stdin too; all unchanged now.
    const result = await box.ugsWithStdin(
      lines.map((line) => JSON.stringify(line)).join('\n'),
      'groups',
      'import',
      '-',
      '--environment',
      'Testing',
    );
    expect(result).toEqual({ code: 0, stdout: 'created 0, updated 0, unchanged 3, rejected 0\n', stderr: '' });
  });
});

describe('import and export files', { timeout: 60_000 }, () => {
  it('an import of a file that does not exist fails on stderr, naming it', async () => {
    const box = sandbox();
    expectCleanFailure(await box.ugs('groups', 'import', join(box.dir, 'missing.jsonl')), /missing\.jsonl/);
  });

  it('an export to a file that cannot be created fails on stderr, naming it, without a stack trace', async () => {
    const box = sandbox();
    await importGroups(box, [{ provided_id: 'g1' }]);
    expectCleanFailure(
      await box.ugs('groups', 'export', '--output', join(box.dir, 'no-such-dir', 'out.jsonl')),
      /no-such-dir/,
    );
  });

  it('an export with tokens over an existing file leaves that file readable by its owner only', async () => {
    const box = sandbox();
    await importGroups(box, [{ provided_id: 'g1' }]);
    const path = join(box.dir, 'existing.jsonl');
    writeFileSync(path, 'old content\n');
    chmodSync(path, 0o644);
    const result = await box.ugs('groups', 'export', '--include-tokens', '--output', path);
    expect(result).toEqual({ code: 0, stdout: '', stderr: 'exported 1 user groups\n' });
    expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
  });
});

describe('a tree through export and import', { timeout: 60_000 }, () => {
  /** Four levels and a second branch, children before parents: the reverse of any order that would just work. */
  const TREE = [
    { provided_id: 'city', parent_user_group_id: 'country', properties: { tier: 4 }, tags: ['leaf'] },
    { provided_id: 'country', parent_user_group_id: 'region', is_demo_group: true },
    { provided_id: 'branch', parent_user_group_id: 'root', tags: ['eu', 'pilot'] },
    { provided_id: 'region', parent_user_group_id: 'root', properties: { region: 'emea' }, tags: ['eu'] },
    { provided_id: 'root', properties: { plan: 'pro', region: 'none' } },
  ];

  it('imports a tree whose children come before their parents, lists it by --parent and --tag, and round-trips it', async () => {
    const box = sandbox();
    expect(await importGroups(box, TREE)).toEqual({ created: 5, updated: 0, unchanged: 0, rejected: [] });
    const shown = jsonOutput<Record<string, unknown>>(await box.ugs('groups', 'show', 'city', '--json'));
    expect(shown).toMatchObject({
      parent_user_group_id: 'country',
      computed_properties: { plan: 'pro', region: 'emea', tier: 4 },
      tags: ['leaf'],
    });

    const listIds = async (...flags: string[]) =>
      jsonOutput<Array<{ provided_id: string }>>(await box.ugs('groups', 'list', '--json', ...flags)).map(
        (row) => row.provided_id,
      );
    expect(await listIds('--parent', 'root')).toEqual(['branch', 'region']);
    expect(await listIds('--tag', 'eu')).toEqual(['branch', 'region']);
    expect(await listIds('--demo')).toEqual(['country']);
    expect(await listIds('--not-demo', '--parent', 'root')).toEqual(['branch', 'region']);
    // The table words a list for people.
    const table = (await box.ugs('groups', 'list', '--parent', 'root')).stdout;
    expect(table).toMatch(/\bbranch\s.*\beu, pilot\s/);
    expect(table).not.toContain('["eu"');

    const exported = await exportGroups(box, '--environment', 'Customer');
    const byId = new Map(
      exported.groups.map((group) => [group.provided_id, group as unknown as Record<string, unknown>]),
    );
    expect(byId.get('country')).toMatchObject({ parent_user_group_id: 'region', is_demo_group: true, tags: [] });
    expect(byId.get('branch')).toMatchObject({ parent_user_group_id: 'root', tags: ['eu', 'pilot'] });

    // Into an empty database, in reversed export order; then the same file again changes nothing.
    const copy = sandbox();
    const reversed = [...exported.groups].reverse();
    expect(await importGroups(copy, reversed)).toEqual({ created: 5, updated: 0, unchanged: 0, rejected: [] });
    expect(await importGroups(copy, reversed)).toEqual({ created: 0, updated: 0, unchanged: 5, rejected: [] });
    const copied = await exportGroups(copy, '--environment', 'Customer');
    const strip = (groups: ExportedGroup[]) =>
      groups
        .map(({ team_id: _teamId, created_at: _createdAt, updated_at: _updatedAt, ...rest }) => rest)
        .sort((a, b) => a.provided_id.localeCompare(b.provided_id));
    expect(strip(copied.groups)).toEqual(strip(exported.groups));
  });

  it('refuses lines whose parent is nowhere, or whose parent links form a cycle, and imports the rest', async () => {
    const box = sandbox();
    const file = join(box.dir, 'broken-tree.jsonl');
    writeJsonLines(file, [
      { provided_id: 'a', parent_user_group_id: 'b' },
      { provided_id: 'b', parent_user_group_id: 'a' },
      { provided_id: 'orphan', parent_user_group_id: 'missing' },
      { provided_id: 'fine' },
    ]);
    const result = await box.ugs('groups', 'import', file, '--json');
    expect(result).toMatchObject({ code: 2, stderr: '' });
    const summary = JSON.parse(result.stdout) as ImportSummary;
    expect(summary).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.rejected.map((rejection) => rejection.line)).toEqual([1, 2, 3]);
    for (const rejection of summary.rejected) expect(rejection.reason).toMatch(/to be the parent/);
  });
});
