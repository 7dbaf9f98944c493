// An import file is read as POST /api/admin/user_groups/import reads its body: NDJSON or a JSON array
// (named by line, or by index), a byte-order mark, blank lines and CRLF taken, each item at most
// 1 MiB, invalid UTF-8 refused. What cannot be read on stops the command, naming the file and the
// item, with the batches before it kept and nothing from it on written; verify-import and
// --supplement read the same forms.
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { cleanUp, exportGroups, sandbox, type ExportedGroup, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { writeJsonLines } from '../support/json-lines.js';

afterAll(cleanUp);

const MIB = 1024 * 1024;

/** A group line carrying its token, so two imports of it give the same groups. */
const group = (providedId: string, extra: Record<string, unknown> = {}) => ({
  provided_id: providedId,
  name: `Group ${providedId}`,
  token: randomUUID(),
  properties: { region: 'emea' },
  mapping: {},
  parent_user_group_id: null,
  is_demo_group: false,
  ...extra,
});

/** The groups of a sandbox without what differs between two databases (the times). */
const groupsOf = async (box: Sandbox) =>
  (await exportGroups(box, '--include-tokens')).groups.map(
    ({ created_at: _created, updated_at: _updated, ...kept }: ExportedGroup) => kept,
  );

const providedIdsOf = async (box: Sandbox) => (await exportGroups(box)).groups.map((kept) => kept.provided_id).sort();

describe('ugs groups import: NDJSON or a JSON array', { timeout: 120_000 }, () => {
  it('a JSON array imports the same groups as its NDJSON form, naming each refused item by its index', async () => {
    const items: unknown[] = [
      group('a'),
      group('b', { parent_user_group_id: 'a' }),
      42,
      group('c', { name: 'x'.repeat(300) }),
      group('d'),
    ];
    const lines = sandbox();
    const ndjson = join(lines.dir, 'groups.jsonl');
    writeJsonLines(ndjson, items);
    // Pretty-printed, over many lines: an array's positions are its indexes, never its lines.
    const array = join(lines.dir, 'groups.json');
    writeFileSync(array, JSON.stringify(items, null, 2));

    const fromLines = await lines.ugs('groups', 'import', ndjson);
    expect(fromLines.code).toBe(2);
    expect(fromLines.stdout).toMatch(
      /^created 3, updated 0, unchanged 0, rejected 2\n {2}line 3: .*JSON object\n {2}line 4: .*name/,
    );

    const arrays = sandbox();
    const fromArray = await arrays.ugs('groups', 'import', array);
    expect(fromArray).toMatchObject({ code: 2, stderr: '' });
    expect(fromArray.stdout).toMatch(
      /^created 3, updated 0, unchanged 0, rejected 2\n {2}index 2: .*JSON object\n {2}index 3: .*name/,
    );
    expect(fromArray.stdout).not.toMatch(/line \d/);
    expect(await groupsOf(arrays)).toEqual(await groupsOf(lines));

    // As JSON, an array's items carry `index` (from 0), as the HTTP import's summary does.
    const again = await arrays.ugs('groups', 'import', array, '--json');
    expect(again).toMatchObject({ code: 2, stderr: '' });
    const json = JSON.parse(again.stdout) as { unchanged: number; rejected: unknown[] };
    expect(json).toMatchObject({
      unchanged: 3,
      rejected: [
        { index: 2, reason: expect.stringMatching(/JSON object/) },
        { index: 3, reason: expect.any(String) },
      ],
    });
    expect(json.rejected[0]).not.toHaveProperty('line');

    // Through stdin too.
    const piped = sandbox();
    const fromStdin = await piped.ugsWithStdin(JSON.stringify(items), 'groups', 'import', '-');
    expect(fromStdin.stdout).toMatch(/^created 3, updated 0, unchanged 0, rejected 2\n {2}index 2: /);
    expect(await groupsOf(piped)).toEqual(await groupsOf(lines));
  });

  it('an item that is not JSON is refused on its own, in an array as on a line, and the import goes on', async () => {
    const box = sandbox();
    const file = join(box.dir, 'groups.json');
    writeFileSync(file, `[${JSON.stringify(group('a'))}, {"provided_id": }, ${JSON.stringify(group('b'))}]`);
    const result = await box.ugs('groups', 'import', file);
    expect(result).toMatchObject({ code: 2, stderr: '' });
    expect(result.stdout).toMatch(/^created 2, updated 0, unchanged 0, rejected 1\n {2}index 1: not valid JSON\n/);
    expect(await providedIdsOf(box)).toEqual(['a', 'b']);
  });

  // The HTTP import refuses the same lines with the same reasons (test/http/user-group-import.errors.test.ts).
  it('an item with a key twice or a __proto__ key is refused on its own, as the HTTP import refuses it', async () => {
    const box = sandbox();
    const file = join(box.dir, 'groups.jsonl');
    const token = JSON.stringify(randomUUID());
    writeFileSync(
      file,
      [
        JSON.stringify(group('a')),
        `{"provided_id":"twice","name":"first","token":${token},"name":"second"}`,
        `{"provided_id":"proto","token":${token},"properties":{"__proto__":{"admin":true}}}`,
        JSON.stringify(group('b')),
      ].join('\n'),
    );
    const result = await box.ugs('groups', 'import', file);
    expect(result).toMatchObject({ code: 2, stderr: '' });
    expect(result.stdout).toMatch(
      /^created 2, updated 0, unchanged 0, rejected 2\n {2}line 2: not valid JSON\n {2}line 3: not valid JSON\n/,
    );
    expect(await providedIdsOf(box)).toEqual(['a', 'b']);

    // verify-import and a supplement read the file the same way.
    const verified = await box.ugs('groups', 'verify-import', file, '--json');
    expect(verified.code).toBe(2);
    expect((JSON.parse(verified.stdout) as { unreadable: unknown[] }).unreadable).toEqual([
      { line: 2, reason: 'not valid JSON' },
      { line: 3, reason: 'not valid JSON' },
    ]);
    const supplement = join(box.dir, 'supplement.jsonl');
    writeFileSync(supplement, '{"provided_id":"a","is_demo_group":true,"is_demo_group":false}\n');
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--supplement', supplement),
      /supplement\.jsonl, line 1: not valid JSON/,
    );
  });

  it('takes a byte-order mark, blank lines and CRLF, in NDJSON and in an array', async () => {
    const box = sandbox();
    const ndjson = join(box.dir, 'windows.jsonl');
    writeFileSync(
      ndjson,
      `\uFEFF${JSON.stringify(group('crlf-1'))}\r\n\r\n  \r\n${JSON.stringify(group('crlf-2'))}\r\n${JSON.stringify(group('crlf-3'))}`,
    );
    const fromLines = await box.ugs('groups', 'import', ndjson, '--json');
    expect(jsonOutput(fromLines)).toMatchObject({ created: 3, rejected: [] });

    const array = join(box.dir, 'windows.json');
    writeFileSync(
      array,
      `\uFEFF[\r\n${[group('crlf-4'), group('crlf-5')].map((line) => JSON.stringify(line)).join(',\r\n\r\n')}\r\n]\r\n`,
    );
    expect(jsonOutput(await box.ugs('groups', 'import', array, '--json'))).toMatchObject({ created: 2, rejected: [] });

    const groups = (await exportGroups(box)).groups;
    expect(groups.map((kept) => kept.provided_id)).toEqual(['crlf-1', 'crlf-2', 'crlf-3', 'crlf-4', 'crlf-5']);
    for (const kept of groups) expect(kept.name).toBe(`Group ${kept.provided_id}`);
  });
});

describe('ugs groups import: a file that cannot be read on stops the import', { timeout: 120_000 }, () => {
  it('an item past 1 MiB stops it naming its line; the batches before it are kept, nothing from it on is written', async () => {
    const box = sandbox();
    const file = join(box.dir, 'big.jsonl');
    const before = ['one', 'two', 'three', 'four', 'five'].map((id) => group(id));
    const [huge, after] = [group('huge'), group('after')];
    writeJsonLines(file, [...before, { ...huge, properties: { blob: 'x'.repeat(MIB) } }, after]);
    // Batches of 2: "one, two" and "three, four" are written; "five" was in the open batch.
    const result = await box.ugs('groups', 'import', file, '--batch-size', '2');
    expectCleanFailure(result, /^ugs: .*big\.jsonl, line 6: more than 1 MiB of JSON/);
    expect(result.stderr).toMatch(/the batches written before it are kept/);
    expect(await providedIdsOf(box)).toEqual(['four', 'one', 'three', 'two']);

    // Fixed, the file is imported again whole: what the stopped import wrote comes out unchanged.
    writeJsonLines(file, [...before, huge, after]);
    expect(jsonOutput(await box.ugs('groups', 'import', file, '--json'))).toMatchObject({
      created: 3,
      updated: 0,
      unchanged: 4,
      rejected: [],
    });
  });

  it('an element of an array past 1 MiB stops it naming its index', async () => {
    const box = sandbox();
    const file = join(box.dir, 'big.json');
    writeFileSync(
      file,
      JSON.stringify([group('one'), group('huge', { properties: { blob: 'x'.repeat(MIB) } }), group('after')], null, 2),
    );
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--batch-size', '1'),
      /big\.json, index 1: more than 1 MiB of JSON/,
    );
    expect(await providedIdsOf(box)).toEqual(['one']);
  });

  it('invalid UTF-8 in a name is refused naming its line, never imported as replacement characters', async () => {
    const box = sandbox();
    const file = join(box.dir, 'latin1.jsonl');
    const line = (value: unknown) => Buffer.from(`${JSON.stringify(value)}\n`);
    writeFileSync(
      file,
      Buffer.concat([
        line(group('one')),
        line(group('two')),
        // "Caf\xe9": Latin-1, not UTF-8.
        Buffer.from('{"provided_id":"three","name":"Caf'),
        Buffer.from([0xe9]),
        Buffer.from('"}\n'),
        line(group('four')),
      ]),
    );
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--batch-size', '1'),
      /latin1\.jsonl, line 3: not valid UTF-8/,
    );
    const groups = (await exportGroups(box)).groups;
    expect(groups.map((kept) => kept.provided_id)).toEqual(['one', 'two']);
    for (const kept of groups) expect(kept.name).not.toContain('\uFFFD');

    // A dry run stops at the same place and says that nothing was written.
    const dry = await box.ugs('groups', 'import', file, '--dry-run');
    expectCleanFailure(dry, /latin1\.jsonl, line 3: not valid UTF-8\nThe dry run stopped there; nothing was written/);
  });

  it('an array never closed, or with text after it, stops it naming the file and the last item read', async () => {
    const box = sandbox();
    const file = join(box.dir, 'cut.json');
    writeFileSync(file, `[${JSON.stringify(group('one'))},\n${JSON.stringify(group('two'))}`);
    expectCleanFailure(
      await box.ugs('groups', 'import', file),
      /cut\.json, after index 0: not a well-formed JSON array \(the file ends before its closing \]\)/,
    );
    writeFileSync(file, `[${JSON.stringify(group('one'))}] and more`);
    expectCleanFailure(
      await box.ugs('groups', 'import', file),
      /cut\.json, after index 0: not a well-formed JSON array \(text follows its closing \]\)/,
    );
    expect(await providedIdsOf(box)).toEqual([]);
  });
});

describe('verify-import and --supplement read a JSON array too', { timeout: 120_000 }, () => {
  it('verifies an array file, naming a difference by its index, and takes an array supplement', async () => {
    const box = sandbox();
    const items = [
      { provided_id: 'p', name: 'Parent', token: randomUUID() },
      { provided_id: 'c', name: 'Child', token: randomUUID() },
    ];
    const file = join(box.dir, 'hosted.json');
    writeFileSync(file, JSON.stringify(items));
    const supplement = join(box.dir, 'supplement.json');
    writeFileSync(
      supplement,
      JSON.stringify([
        { provided_id: 'c', parent_user_group_id: 'p', is_demo_group: true },
        { provided_id: 'p', is_demo_group: false },
      ]),
    );
    const imported = await box.ugs('groups', 'import', file, '--supplement', supplement, '--json');
    expect(jsonOutput(imported)).toMatchObject({ created: 2, supplemented: 2, rejected: [] });
    const child = jsonOutput<{ parent_user_group_id: string; is_demo_group: boolean }>(
      await box.ugs('groups', 'show', 'c', '--json'),
    );
    expect(child).toMatchObject({ parent_user_group_id: 'p', is_demo_group: true });

    const passed = await box.ugs('groups', 'verify-import', file, '--supplement', supplement);
    expect(passed).toMatchObject({ code: 0, stdout: 'checked 2, matched 2, differ 0, missing 0, unreadable 0\n' });

    writeFileSync(file, JSON.stringify([items[0], { ...items[1], name: 'Renamed' }, 'not a group']));
    const failed = await box.ugs('groups', 'verify-import', file, '--supplement', supplement);
    expect(failed.code).toBe(2);
    expect(failed.stdout).toBe(
      [
        'checked 2, matched 1, differ 1, missing 0, unreadable 1',
        '  index 1 (c): name is "Child", the file has "Renamed"',
        '  index 2: a line must be a JSON object',
        '',
      ].join('\n'),
    );
    const verified = await box.ugs('groups', 'verify-import', file, '--supplement', supplement, '--json');
    expect(verified.code).toBe(2);
    const json = JSON.parse(verified.stdout) as { differences: unknown[]; unreadable: unknown[] };
    expect(json.differences).toEqual([expect.objectContaining({ index: 1, provided_id: 'c' })]);
    expect(json.unreadable).toEqual([{ index: 2, reason: 'a line must be a JSON object' }]);
  });

  it('a bad item of an array supplement fails the command naming its index, before anything is written', async () => {
    const box = sandbox();
    const file = join(box.dir, 'groups.jsonl');
    writeJsonLines(file, [group('one')]);
    const supplement = join(box.dir, 'supplement.json');
    writeFileSync(supplement, JSON.stringify([{ provided_id: 'one', is_demo_group: true }, { mapping: {} }]));
    expectCleanFailure(
      await box.ugs('groups', 'import', file, '--supplement', supplement),
      /supplement\.json, index 1: .*provided_id/,
    );
    expect(await providedIdsOf(box)).toEqual([]);
  });
});
