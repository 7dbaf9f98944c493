// The CLI's ways in for a tag (docs/api.md#hierarchy-demo-groups-and-tags) take the API's one rule: a C1 control
// character (U+0080–U+009F) or a C0 one is refused in `groups list --tag`, `groups sync --prune` and an
// imported line's tags, naming the field and its code, and nothing is written.
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterAll(cleanUp);

/** What a refusal must leave as it was: the groups and the audit trail. */
function stored(box: Sandbox): unknown {
  const db = new Database(box.databasePath, { readonly: true, fileMustExist: true });
  try {
    return {
      groups: db.prepare('SELECT * FROM user_groups ORDER BY team_id').all(),
      audit: db.prepare('SELECT * FROM audit_events ORDER BY id').all(),
    };
  } finally {
    db.close();
  }
}

describe('a tag given to the CLI', () => {
  let box: Sandbox;
  let groups: string;

  beforeAll(async () => {
    box = sandbox();
    groups = join(box.dir, 'groups.ndjson');
    writeFileSync(groups, `${JSON.stringify({ user_group_id: 'acme', tags: ['managed'] })}\n`);
    expect((await box.ugs('groups', 'sync', groups)).code).toBe(0);
  });

  for (const [label, bad] of [
    ['a C1 control (U+0085)', 'man\u0085aged'],
    ['a C0 control (U+0001)', 'man\u0001aged'],
  ] as const) {
    it(`with ${label} is refused by groups list --tag and groups sync --prune (invalid_field), changing nothing`, async () => {
      const before = stored(box);
      expectCleanFailure(
        await box.ugs('groups', 'list', '--tag', bad),
        /^ugs: "tag" must be a tag: 1 to 64 characters without control characters\. \(invalid_field\)\n$/,
      );
      expectCleanFailure(
        await box.ugs('groups', 'sync', groups, '--prune', bad),
        /^ugs: "prune" must be a tag: 1 to 64 characters without control characters\. \(invalid_field\)\n$/,
      );
      expect(stored(box)).toEqual(before);
    });
  }

  it('with a C1 control is refused on an imported line, which writes nothing', async () => {
    const file = join(box.dir, 'import.ndjson');
    writeFileSync(file, `${JSON.stringify({ provided_id: 'acme-eu', tags: ['a\u009Fb'] })}\n`);
    const before = stored(box);
    const result = await box.ugs('groups', 'import', file, '--json');
    // Exit 2: some line was rejected; the summary is still printed.
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout) as { created: number; rejected: Array<{ line: number; reason: string }> };
    expect(summary.created).toBe(0);
    expect(summary.rejected).toEqual([{ line: 1, reason: expect.stringMatching(/tags/) }]);
    expect(stored(box)).toEqual(before);
  });

  it('without a control character lists the groups carrying it', async () => {
    const listed = jsonOutput<Array<{ provided_id: string }>>(
      await box.ugs('groups', 'list', '--tag', 'managed', '--json'),
    );
    expect(listed.map((group) => group.provided_id)).toEqual(['acme']);
  });
});
