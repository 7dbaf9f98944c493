// `ugs groups sync` with a YAML tenants file, and `--check` for drift detection in CI.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { cleanUp, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterAll(cleanUp);

interface SyncJson {
  applied: boolean;
  summary: Record<string, number>;
  plan: Array<{ action: string; user_group_id: string; line?: number }>;
}

describe('ugs groups sync with YAML', () => {
  it('syncs a YAML file of 1 000 groups, then --check finds no drift, and a change is drift (exit 2)', async () => {
    const box = sandbox();
    const file = join(box.dir, 'tenants.yaml');
    const groups = Array.from({ length: 1000 }, (_, index) => ({
      user_group_id: `tenant-${String(index).padStart(4, '0')}`,
      name: `Tenant ${index}`,
      ...(index > 0 ? { parent_user_group_id: 'tenant-0000' } : {}),
      properties: { region: index % 2 === 0 ? 'emea' : 'amer', seats: index, trial: index % 3 === 0 },
      tags: ['managed'],
    }));
    writeFileSync(file, stringify(groups));

    const applied = jsonOutput<SyncJson>(await box.ugs('groups', 'sync', file, '--json'));
    expect(applied).toMatchObject({ applied: true, summary: { create: 1000, update: 0, unchanged: 0, delete: 0 } });
    const shown = jsonOutput<{ properties: unknown; parent_user_group_id: string }>(
      await box.ugs('groups', 'show', 'tenant-0003', '--json'),
    );
    expect(shown).toMatchObject({
      properties: { region: 'amer', seats: 3, trial: true },
      parent_user_group_id: 'tenant-0000',
    });

    const clean = await box.ugs('groups', 'sync', file, '--check');
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to delete, 1000 unchanged/);

    groups[7]!.name = 'Renamed';
    writeFileSync(file, stringify(groups));
    const drift = await box.ugs('groups', 'sync', file, '--check', '--json');
    expect(drift.code).toBe(2);
    expect(jsonOutput<SyncJson>({ ...drift, code: 0 }).summary).toMatchObject({ update: 1, unchanged: 999 });
    // --check never applies.
    const still = await box.ugs('groups', 'sync', file, '--check');
    expect(still.code).toBe(2);
  });

  it('names the YAML line of a group the file gets wrong', async () => {
    const box = sandbox();
    const file = join(box.dir, 'tenants.yml');
    writeFileSync(file, ['- user_group_id: a', '  name: A', '', '- user_group_id: b', '  nmae: B', ''].join('\n'));
    expectCleanFailure(await box.ugs('groups', 'sync', file, '--dry-run'), /^ugs: Line 4: .*nmae/);

    writeFileSync(file, ['- user_group_id: a', '  tags: [x', ''].join('\n'));
    expectCleanFailure(await box.ugs('groups', 'sync', file, '--dry-run'), /^ugs: Line \d: The text is not valid YAML/);

    writeFileSync(file, ['- user_group_id: a', '- user_group_id: b', '  parent_user_group_id: nobody', ''].join('\n'));
    expectCleanFailure(await box.ugs('groups', 'sync', file, '--dry-run'), /^ugs: Line 2: /);

    // "Caf\xe9": Latin-1, not UTF-8, refused with its line rather than read as a replacement character.
    writeFileSync(
      file,
      Buffer.concat([Buffer.from('- user_group_id: a\n- user_group_id: cafe\n  name: Caf'), Buffer.from([0xe9, 0x0a])]),
    );
    expectCleanFailure(await box.ugs('groups', 'sync', file), /^ugs: Line 3: The text is not valid UTF-8\./);
  });

  it('refuses a scalar YAML would read as another value than it shows, never syncing another id', async () => {
    const box = sandbox();
    const file = join(box.dir, 'tenants.yaml');
    const refusals: Array<[string, RegExp]> = [
      ['- user_group_id: 00123', /^ugs: Line 1: 00123 would be read as 123; quote it/],
      ['- user_group_id: 9007199254740993', /^ugs: Line 1: 9007199254740993 would be read as 9007199254740992/],
      ['- user_group_id: a\n  is_demo_group: True', /^ugs: Line 2: True would be read as true/],
      ['- user_group_id: &id a\n- user_group_id: *id', /^ugs: Line 2: Aliases \(\*id\) are not allowed/],
      ['- user_group_id: a\n  properties:', /^ugs: Line 2: An empty value would be read as null/],
      ['- user_group_id: !!str 5', /^ugs: Line 1: Tags .* are not allowed/],
      ['user_group_id: a', /^ugs: Line 1: A tenants file in YAML is a list of user groups/],
    ];
    for (const [text, message] of refusals) {
      writeFileSync(file, `${text}\n`);
      expectCleanFailure(await box.ugs('groups', 'sync', file, '--dry-run'), message);
    }
    // Quoted, the same text is the id it shows.
    writeFileSync(file, '- user_group_id: "00123"\n');
    const planned = jsonOutput<SyncJson>(await box.ugs('groups', 'sync', file, '--dry-run', '--json'));
    expect(planned.plan).toEqual([expect.objectContaining({ action: 'create', user_group_id: '00123' })]);
  });

  it('reads YAML from stdin with --format yaml', async () => {
    const box = sandbox();
    const result = await box.ugsWithStdin(
      '- user_group_id: piped\n  name: Piped\n',
      'groups',
      'sync',
      '-',
      '--format',
      'yaml',
      '--dry-run',
      '--json',
    );
    expect(jsonOutput<SyncJson>(result).plan).toEqual([
      expect.objectContaining({ action: 'create', user_group_id: 'piped' }),
    ]);
  });
});
