// The import suite's cases, shared by `ugs groups import` (test/cli/groups.test.ts) and its HTTP
// form, POST /api/admin/user_groups/import (test/http/user-group-import.*.test.ts): the same lines
// give the same summary either way, but for what only the HTTP form refuses (a line naming another
// environment than its API token's).

/** A native token made of one repeated hex digit. */
export const nativeToken = (digit: string): string => `ugt_${digit.repeat(64)}`;

export interface MixedImportFile {
  /** Objects become JSON lines; strings are written as they are (a broken line, a blank one). */
  lines: unknown[];
  /** `environment/provided_id` of each line that is imported. */
  good: string[];
  /** Each refused line's number and what its reason must mention. */
  bad: Array<{ line: number; reason: RegExp }>;
}

/**
 * Good and bad lines interleaved. `catalog.sales` is a schema that data source `catalog.warehouse`
 * (a provided id) of the importing environment maps. Over HTTP, the line tagged Testing is refused
 * when a Customer API token sends it.
 */
export function mixedImportFile(
  catalog: { sales: number; warehouse: string },
  over: 'cli' | 'http',
  tokenDigit = 'a',
): MixedImportFile {
  const token = nativeToken(tokenDigit);
  const lines: unknown[] = [
    {
      provided_id: 'good-1',
      name: 'Good one',
      properties: { plan: 'gold' },
      mapping: { [catalog.sales]: catalog.warehouse },
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
    { provided_id: 'good-token', token },
    { provided_id: 'bad-taken-token', token },
  ];
  const testingLine =
    over === 'cli'
      ? { good: ['Testing/42'], bad: [] }
      : { good: [], bad: [{ line: 3, reason: /api_environment_tag/ }] };
  return {
    lines,
    good: ['Customer/good-1', ...testingLine.good, 'Customer/good-256', 'Customer/good-token'],
    bad: [
      { line: 2, reason: /JSON/ },
      ...testingLine.bad,
      { line: 4, reason: /colour/ },
      { line: 6, reason: /name.*256/ },
      { line: 8, reason: /properties/ },
      { line: 9, reason: /nowhere/ },
      { line: 10, reason: /token/ },
      { line: 12, reason: /token/ },
    ],
  };
}

/** Four levels and a second branch, children before parents: the reverse of any order that would just work. */
export const TREE_CHILDREN_FIRST = [
  { provided_id: 'city', parent_user_group_id: 'country', properties: { tier: 4 }, tags: ['leaf'] },
  { provided_id: 'country', parent_user_group_id: 'region', is_demo_group: true },
  { provided_id: 'branch', parent_user_group_id: 'root', tags: ['eu', 'pilot'] },
  { provided_id: 'region', parent_user_group_id: 'root', properties: { region: 'emea' }, tags: ['eu'] },
  { provided_id: 'root', properties: { plan: 'pro', region: 'none' } },
];

/** Lines 1 and 2 form a cycle, line 3's parent is nowhere: all three refused (`to be the parent`), line 4 created. */
export const BROKEN_TREE = [
  { provided_id: 'a', parent_user_group_id: 'b' },
  { provided_id: 'b', parent_user_group_id: 'a' },
  { provided_id: 'orphan', parent_user_group_id: 'missing' },
  { provided_id: 'fine' },
];
export const BROKEN_TREE_REFUSED = { lines: [1, 2, 3], reason: /to be the parent/ };
