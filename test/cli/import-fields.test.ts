// A move never loses a field silently: what each import line lacked is reported, a supplement fills
// it, --require-fields refuses a line still lacking one, verify-import compares every group with its
// line; team_ids are kept whatever the order of the lines, up to their bound; a shared data source is
// mapped from both environments.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { auditEventCount, cleanUp, type ImportSummary, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { writeJsonLines } from '../support/json-lines.js';

afterAll(cleanUp);

interface Exported {
  team_id: number;
  provided_id: string;
  name: string;
  mapping: Record<string, string>;
  parent_user_group_id: string | null;
  is_demo_group: boolean;
  api_environment_tag: string;
}

const exportOf = async (box: Sandbox, environment = 'Customer'): Promise<Exported[]> => {
  const { stdout } = await box.ugs('groups', 'export', '--environment', environment);
  return stdout.trim() === ''
    ? []
    : stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Exported);
};

/** A sandbox with schema 40 and data source 213 (provided id "213"), shared by both environments. */
async function catalogue(): Promise<Sandbox> {
  const box = sandbox();
  expect((await box.ugs('schemas', 'create', '--name', 'Sales', '--id', '40')).code).toBe(0);
  const created = await box.ugs(
    'data-sources',
    'create',
    ...['--environment', 'Customer', '--shared', '--schema-id', '40', '--id', '213', '--provided-id', '213'],
    ...['--name', 'Sales EU', '--json'],
  );
  expect(jsonOutput(created)).toMatchObject({ id: 213, api_environment_tag: 'Customer', shared: true });
  return box;
}

/** The hosted product's documented shape: no mapping, parent or demo flag. */
const documented = (providedId: string, teamId: number) => ({
  team_id: teamId,
  token: randomUUID(),
  name: `Group ${providedId}`,
  provided_id: providedId,
  properties: { region: 'emea' },
});

describe('ugs groups import: what a line lacks', { timeout: 120_000 }, () => {
  it('reports per line what it lacked and what the supplement gave; the supplement never overrides the line', async () => {
    const box = await catalogue();
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, [
      documented('child', 501),
      { ...documented('root', 502), mapping: { '40': '213' } },
      documented('plain', 503),
    ]);
    const supplement = join(box.dir, 'supplement.jsonl');
    writeJsonLines(supplement, [
      { provided_id: 'child', mapping: { '40': '213' }, parent_user_group_id: 'root', is_demo_group: true },
      // The line's own mapping wins over this one: the export stays authoritative.
      { provided_id: 'root', mapping: {}, parent_user_group_id: null, is_demo_group: false },
    ]);
    const summary = jsonOutput<ImportSummary>(
      await box.ugs('groups', 'import', file, '--supplement', supplement, '--json'),
    );
    expect(summary).toMatchObject({
      created: 3,
      rejected: [],
      supplemented: 2,
      lacking_lines: 3,
      lacking_fields: {
        mapping: { lacked: 2, supplied: 1 },
        parent_user_group_id: { lacked: 3, supplied: 2 },
        is_demo_group: { lacked: 3, supplied: 2 },
      },
    });
    expect(summary.lacking).toEqual([
      {
        line: 1,
        provided_id: 'child',
        fields: ['mapping', 'parent_user_group_id', 'is_demo_group'],
        supplied: ['mapping', 'parent_user_group_id', 'is_demo_group'],
      },
      {
        line: 2,
        provided_id: 'root',
        fields: ['parent_user_group_id', 'is_demo_group'],
        supplied: ['parent_user_group_id', 'is_demo_group'],
      },
      { line: 3, provided_id: 'plain', fields: ['mapping', 'parent_user_group_id', 'is_demo_group'], supplied: [] },
    ]);
    const groups = await exportOf(box);
    expect(
      groups.map(({ provided_id, mapping, parent_user_group_id, is_demo_group }) => ({
        provided_id,
        mapping,
        parent_user_group_id,
        is_demo_group,
      })),
    ).toEqual([
      { provided_id: 'child', mapping: { '40': '213' }, parent_user_group_id: 'root', is_demo_group: true },
      { provided_id: 'root', mapping: { '40': '213' }, parent_user_group_id: null, is_demo_group: false },
      { provided_id: 'plain', mapping: {}, parent_user_group_id: null, is_demo_group: false },
    ]);

    // For people: the summary, and one line per lacking line.
    const again = await box.ugs('groups', 'import', file);
    expect(again.stdout).toContain('lacking 3 lines: mapping 2, parent_user_group_id 3, is_demo_group 3\n');
    expect(again.stdout).toContain(
      '  line 3 (plain): lacks mapping, parent_user_group_id, is_demo_group; mapping, parent_user_group_id, is_demo_group kept as here or the default\n',
    );
  });

  it('--require-fields rejects a line still lacking a named field, naming it, and writes nothing of it', async () => {
    const box = await catalogue();
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, [documented('lacks', 601), { ...documented('has', 602), mapping: { '40': '213' } }]);
    const result = await box.ugs('groups', 'import', file, '--require-fields', 'mapping', '--json');
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout) as ImportSummary;
    expect(summary).toMatchObject({
      created: 1,
      rejected: [{ line: 1, reason: 'the line lacks mapping, which is required' }],
    });
    expect((await exportOf(box)).map((group) => group.provided_id)).toEqual(['has']);
    // A supplement that gives it lets the line in.
    const supplement = join(box.dir, 'supplement.jsonl');
    writeJsonLines(supplement, [{ provided_id: 'lacks', mapping: { '40': '213' } }]);
    const supplied = await box.ugs('groups', 'import', file, '--require-fields', 'mapping', '--supplement', supplement);
    expect(supplied.code).toBe(0);
    expect(supplied.stdout).toContain('created 1, updated 0, unchanged 1, rejected 0');
  });

  it('refuses an unknown field name and a bad supplement line cleanly, changing nothing', async () => {
    const box = await catalogue();
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, [documented('one', 701)]);
    const before = auditEventCount(box);
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--require-fields', 'mapping,tokens'),
      /Unknown field tokens; give some of name, properties, mapping, parent_user_group_id, is_demo_group/,
    );
    const supplement = join(box.dir, 'supplement.jsonl');
    writeJsonLines(supplement, [{ provided_id: 'one', mapping: { '40': '213' } }, { mapping: {} }]);
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--supplement', supplement),
      /supplement\.jsonl, line 2: .*provided_id/,
    );
    expect(auditEventCount(box)).toBe(before);
    expect(await exportOf(box)).toEqual([]);
  });
});

describe('ugs groups verify-import', { timeout: 120_000 }, () => {
  it('passes when every group matches its line, and exits 2 naming each difference (never a token)', async () => {
    const box = await catalogue();
    const lines = [
      { ...documented('a', 801), mapping: { '40': '213' }, parent_user_group_id: null, is_demo_group: false },
      { ...documented('b', 802), mapping: {}, parent_user_group_id: 'a', is_demo_group: true },
    ];
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, lines);
    expect((await box.ugs('groups', 'import', file)).code).toBe(0);
    const passed = await box.ugs('groups', 'verify-import', file);
    expect(passed).toMatchObject({ code: 0, stdout: 'checked 2, matched 2, differ 0, missing 0, unreadable 0\n' });

    const other = join(box.dir, 'other.jsonl');
    const otherToken = randomUUID();
    writeJsonLines(other, [
      { ...lines[0]!, name: 'Renamed', token: otherToken, mapping: null },
      { ...lines[1]!, parent_user_group_id: null, team_id: 9 },
      documented('never-imported', 803),
      '"not an object"',
    ]);
    const failed = await box.ugs('groups', 'verify-import', other);
    expect(failed.code).toBe(2);
    expect(failed.stdout).toBe(
      [
        'checked 3, matched 0, differ 2, missing 1, unreadable 1',
        '  line 1 (a): token does not verify',
        '  line 1 (a): name is "Group a", the file has "Renamed"',
        '  line 1 (a): mapping is {"40":"213"}, the file has {}',
        '  line 2 (b): team_id is 802, the file has 9',
        '  line 2 (b): parent_user_group_id is "a", the file has null',
        '  line 3 (never-imported): no such group in its environment',
        '  line 4: a line must be a JSON object',
        '',
      ].join('\n'),
    );
    for (const line of [...lines, { token: otherToken }]) expect(failed.stdout).not.toContain(line.token);
    const json = JSON.parse((await box.ugs('groups', 'verify-import', other, '--json')).stdout) as {
      differences: Array<{ fields: Array<{ field: string; expected?: unknown }> }>;
    };
    expect(json.differences[0]!.fields[0]).toEqual({ field: 'token' });
  });
});

describe('ugs groups import: team_ids', { timeout: 120_000 }, () => {
  const teamIdsOf = async (box: Sandbox) =>
    Object.fromEntries((await exportOf(box)).map((group) => [group.provided_id, group.team_id]));

  for (const [order, arrange] of [
    ['reverse', (ids: number[]) => [...ids].reverse()],
    ['shuffled', (ids: number[]) => [ids[3]!, ids[0]!, ids[5]!, ids[1]!, ids[4]!, ids[2]!]],
  ] as const) {
    it(`keeps every team_id never issued with the lines in ${order} order, across batches`, async () => {
      const box = sandbox();
      const teamIds = [1001, 1004, 1010, 1011, 1500, 2000];
      const file = join(box.dir, 'hosted.jsonl');
      writeJsonLines(
        file,
        arrange(teamIds).map((teamId) => documented(`g${teamId}`, teamId)),
      );
      // One line a batch: each batch sees the numbering the previous ones left.
      expect((await box.ugs('groups', 'import', file, '--batch-size', '1')).code).toBe(0);
      expect(await teamIdsOf(box)).toEqual(Object.fromEntries(teamIds.map((teamId) => [`g${teamId}`, teamId])));
      // New groups are numbered above them; a number issued or kept is never kept again.
      const later = join(box.dir, 'later.jsonl');
      writeJsonLines(later, [{ provided_id: 'plain' }, documented('dup', 1010), documented('in-gap', 1002)]);
      expect((await box.ugs('groups', 'import', later, '--batch-size', '1')).code).toBe(0);
      const after = await teamIdsOf(box);
      expect(after.plain).toBeGreaterThan(2000);
      expect(after.dup).toBeGreaterThan(after.plain!);
      expect(after['in-gap']).toBe(1002);
    });
  }

  it('keeps team_ids up to 2147483647 only, so numbering goes on below 2^31 + a few', async () => {
    const box = sandbox();
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, [documented('too-high', 9_007_199_254_740_000), documented('top', 2_147_483_647)]);
    expect((await box.ugs('groups', 'import', file)).code).toBe(0);
    writeJsonLines(file, [{ provided_id: 'next' }]);
    expect((await box.ugs('groups', 'import', file)).code).toBe(0);
    const teamIds = await teamIdsOf(box);
    expect(teamIds.top).toBe(2_147_483_647);
    expect(teamIds['too-high']).toBeLessThan(2_147_483_647);
    expect(teamIds.next).toBe(2_147_483_648);
  });
});

describe('a shared data source', { timeout: 120_000 }, () => {
  it('is listed and mapped in both environments by the same id', async () => {
    const box = await catalogue();
    const listed = jsonOutput<Array<{ id: number; shared: boolean }>>(
      await box.ugs('data-sources', 'list', '--environment', 'Testing', '--json'),
    );
    expect(listed).toEqual([expect.objectContaining({ id: 213, shared: true, api_environment_tag: 'Customer' })]);
    const file = join(box.dir, 'testing.jsonl');
    writeJsonLines(file, [{ provided_id: 't1', mapping: { '40': '213' } }]);
    expect((await box.ugs('groups', 'import', file, '--environment', 'Testing')).code).toBe(0);
    writeJsonLines(file, [{ provided_id: 'c1', mapping: { '40': 213 } }]);
    expect((await box.ugs('groups', 'import', file, '--environment', 'Customer')).code).toBe(0);
    expect((await exportOf(box, 'Testing')).map((group) => group.mapping)).toEqual([{ '40': '213' }]);
    expect((await exportOf(box, 'Customer')).map((group) => group.mapping)).toEqual([{ '40': '213' }]);
  });
});
