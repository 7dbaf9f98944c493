// `ugs groups sync FILE` (docs/api.md#sync-tenants-as-code) against a real SQLite file: the plan as a diff, --dry-run,
// --json, --prune, and a refusal naming the line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditEventCount, cleanUp, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterAll(cleanUp);

const lines = (groups: Array<Record<string, unknown>>) =>
  groups.map((group) => JSON.stringify(group)).join('\n') + '\n';

describe('ugs groups sync', () => {
  it('shows the plan as a plain diff, applies it, and a second run plans nothing', async () => {
    const box = sandbox();
    const file = join(box.dir, 'groups.ndjson');
    writeFileSync(
      file,
      lines([
        { user_group_id: 'acme', name: 'Acme', tags: ['managed'] },
        { user_group_id: 'acme-eu', parent_user_group_id: 'acme', properties: { region: 'eu' }, tags: ['managed'] },
      ]),
    );

    const dry = await box.ugs('groups', 'sync', file, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      [
        '+ create acme (line 1)',
        '    provided_id: "acme"',
        '    name: "Acme"',
        '    mapping: {}',
        '    tags: ["managed"]',
        '+ create acme-eu (line 2)',
        '    provided_id: "acme-eu"',
        '    name: "acme-eu"',
        '    properties: {"region":"eu"}',
        '    mapping: {}',
        '    parent_user_group_id: "acme"',
        '    tags: ["managed"]',
        'Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged (dry run: nothing changed).',
        '',
      ].join('\n'),
    );
    // No colour codes when stdout is not a terminal.
    expect(dry.stdout).not.toContain('\x1b[');
    const auditBefore = auditEventCount(box);

    const applied = await box.ugs('groups', 'sync', file);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(
      /Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged \(applied\)\.\nSync id: sync_[0-9a-f]{24}\n$/,
    );
    expect(applied.stdout).not.toMatch(/ugt_/);
    expect(applied.stderr).toBe('applying 2 changes in one transaction…\n');
    expect(auditEventCount(box)).toBe(auditBefore + 2);

    const again = await box.ugs('groups', 'sync', file, '--json');
    const sync = jsonOutput<{ applied: boolean; summary: Record<string, number>; plan: unknown[] }>(again);
    expect(sync).toMatchObject({ applied: false, summary: { create: 0, update: 0, unchanged: 2, delete: 0 } });

    // Edited: one rename; with --prune, a group the file leaves out goes.
    writeFileSync(file, lines([{ user_group_id: 'acme', name: 'Acme Corp', tags: ['managed'] }]));
    const edited = await box.ugs('groups', 'sync', file, '--prune', 'managed', '--dry-run');
    expect(edited.stdout).toBe(
      [
        '~ update acme (line 1)',
        '    name: "Acme" → "Acme Corp"',
        '- delete acme-eu',
        '    provided_id: "acme-eu"',
        '    name: "acme-eu"',
        '    properties: {"region":"eu"}',
        '    mapping: {}',
        '    parent_user_group_id: "acme"',
        '    tags: ["managed"]',
        'Plan: 0 to create, 1 to update, 1 to delete, 0 unchanged (dry run: nothing changed).',
        '',
      ].join('\n'),
    );
  });

  it('refuses a file with an invalid group, naming its line, and changes nothing', async () => {
    const box = sandbox();
    expect((await box.ugs('migrate')).code).toBe(0);
    const file = join(box.dir, 'bad.ndjson');
    writeFileSync(file, lines([{ user_group_id: 'ok' }, { user_group_id: 'bad', is_demo_group: 'yes' }]));
    const before = auditEventCount(box);
    expectCleanFailure(await box.ugs('groups', 'sync', file), /Line 2: "is_demo_group"/);
    expect(auditEventCount(box)).toBe(before);
  });

  it('refuses a file with a group the API refuses as JSON (a key twice, __proto__), naming its line, and changes nothing', async () => {
    const box = sandbox();
    expect((await box.ugs('migrate')).code).toBe(0);
    const before = auditEventCount(box);
    const twice = join(box.dir, 'twice.ndjson');
    writeFileSync(twice, '{"user_group_id":"ok"}\n{"user_group_id":"twice","name":"a","name":"b"}\n');
    expectCleanFailure(
      await box.ugs('groups', 'sync', twice),
      /^ugs: Line 2: The text has the key "name" twice in one object\. \(invalid_json\)\n/,
    );
    const proto = join(box.dir, 'proto.json');
    writeFileSync(proto, '[{"user_group_id":"ok"}, {"user_group_id":"proto","properties":{"__proto__":{}}}]');
    expectCleanFailure(await box.ugs('groups', 'sync', proto), /^ugs: Item 1: Object keys "__proto__"/);
    expect(auditEventCount(box)).toBe(before);
  });

  it('refuses invalid UTF-8 naming its line or index, never syncing it as replacement characters', async () => {
    const box = sandbox();
    expect((await box.ugs('migrate')).code).toBe(0);
    const before = auditEventCount(box);
    // "Caf\xe9": Latin-1, not UTF-8.
    const latin1 = Buffer.concat([
      Buffer.from('{"user_group_id":"cafe","name":"Caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    const ndjson = join(box.dir, 'latin1.ndjson');
    writeFileSync(ndjson, Buffer.concat([Buffer.from('{"user_group_id":"ok"}\n'), latin1, Buffer.from('\n')]));
    expectCleanFailure(
      await box.ugs('groups', 'sync', ndjson),
      /^ugs: Line 2: The text is not valid UTF-8\. \(invalid_json\)\n/,
    );
    const array = join(box.dir, 'latin1.json');
    writeFileSync(array, Buffer.concat([Buffer.from('[{"user_group_id":"ok"},\n'), latin1, Buffer.from(']')]));
    expectCleanFailure(await box.ugs('groups', 'sync', array), /^ugs: Item 1: The text is not valid UTF-8\./);
    expect(auditEventCount(box)).toBe(before);
  });
});
