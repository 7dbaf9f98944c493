import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { GROUP_COLUMN, USER_GROUP_COLUMNS } from '../../src/store/user-group-columns.js';

/*
 * The description of a user group's columns (src/store/user-group-columns.ts) is the only place an
 * engine lists them: no SQL text elsewhere in src/store (migrations aside, which create them) lists a
 * group's columns or names one that only a whole group's read, insert or patch touches. A statement
 * that must name one (a filter, a rotation) does it through GROUP_COLUMN, which this scan does not see.
 */

const STORE = join(import.meta.dirname, '../../src/store');
const DESCRIPTION = 'user-group-columns.ts';

/** Written only as part of a whole group (its read, insert or patch), never a key to find one by. */
const GROUP_ONLY = [
  GROUP_COLUMN.isDemoGroup,
  GROUP_COLUMN.tags,
  GROUP_COLUMN.tokenCiphertext,
  GROUP_COLUMN.tokenGeneration,
];

/**
 * A list of a group's columns: more of them in a row, comma separated, than the identity a walk or an
 * audit entry names (team id, tenant, provided id: four).
 */
const LIST_LENGTH = 5;

function storeFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : storeFiles(path);
    return entry.name.endsWith('.ts') && relative(STORE, path) !== DESCRIPTION ? [path] : [];
  });
}

/** The text of every string and template literal of a file (a template's parts between its ${…}). */
function literalTexts(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const texts: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    )
      texts.push(node.text);
    node.forEachChild(visit);
  };
  visit(source);
  return texts;
}

const COLUMN_NAMES = new Set<string>(USER_GROUP_COLUMNS.map((column) => column.column));
const RECORD_KEYS = new Set(USER_GROUP_COLUMNS.map((column) => column.key));
const IDENTIFIER = /^(?:[a-z_][a-z0-9_]*\.)?([a-z_][a-z0-9_]*)(?:::[a-z[\]]+)?$/;
/** An item's first identifier (it may close a run: `g.name FROM …`) and its last (it may open one: `SELECT g.team_id`). */
const LEADING = /^(?:[a-z_][a-z0-9_]*\.)?([a-z_][a-z0-9_]*)\b/;
const TRAILING = /(?:^|[\s(])(?:[a-z_][a-z0-9_]*\.)?([a-z_][a-z0-9_]*)(?:::[a-z[\]]+)?$/;

/** The longest comma-separated run of the group's column names (qualified or cast or not) in `text`. */
function longestColumnRun(text: string): string[] {
  let longest: string[] = [];
  let run: string[] = [];
  const keep = () => {
    if (run.length > longest.length) longest = [...run];
  };
  for (const item of text.split(',').map((part) => part.trim())) {
    const whole = IDENTIFIER.exec(item)?.[1];
    if (whole !== undefined && COLUMN_NAMES.has(whole)) {
      run.push(whole);
      continue;
    }
    const leading = LEADING.exec(item)?.[1];
    if (leading !== undefined && COLUMN_NAMES.has(leading)) run.push(leading);
    keep();
    const trailing = TRAILING.exec(item)?.[1];
    run = trailing !== undefined && COLUMN_NAMES.has(trailing) ? [trailing] : [];
  }
  keep();
  return longest;
}

describe('the user-group column description', () => {
  const files = storeFiles(STORE);

  it('finds the engines’ stores to scan', () => {
    const names = files.map((path) => relative(STORE, path));
    expect(names).toContain('sqlite/user-groups.ts');
    expect(names).toContain('postgres/user-groups/reads.ts');
    expect(names).toContain('postgres/user-groups/single-writes.ts');
  });

  it('is the only place in src/store that names a column only a whole group touches', () => {
    const found = files.flatMap((path) =>
      literalTexts(path).flatMap((text) =>
        // A record key alone (`tags` is both) is not SQL.
        RECORD_KEYS.has(text)
          ? []
          : GROUP_ONLY.filter((column) => new RegExp(`\\b${column}\\b`).test(text)).map(
              (column) => `${relative(STORE, path)}: ${column}`,
            ),
      ),
    );
    expect(found).toEqual([]);
  });

  it('is the only place in src/store that lists a group’s columns', () => {
    const found = files.flatMap((path) =>
      literalTexts(path).flatMap((text) => {
        const run = longestColumnRun(text);
        return run.length >= LIST_LENGTH ? [`${relative(STORE, path)}: ${run.join(', ')}`] : [];
      }),
    );
    expect(found).toEqual([]);
  });

  it('would see a hand-written list or a group-only column', () => {
    expect(
      longestColumnRun('SELECT g.team_id, g.workspace_id, g.environment, g.provided_id, g.name FROM'),
    ).toHaveLength(LIST_LENGTH);
    expect(
      longestColumnRun('unnest(@a) AS g(i, provided_id, name, token_hash, token_ciphertext, properties)'),
    ).toHaveLength(LIST_LENGTH);
    expect(GROUP_ONLY).toContain('is_demo_group');
  });

  it('describes every column once, with the keys the patch writes', () => {
    const columns = USER_GROUP_COLUMNS.map((column) => column.column);
    expect(new Set(columns).size).toBe(columns.length);
    const keys = USER_GROUP_COLUMNS.map((column) => column.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
