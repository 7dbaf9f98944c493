// The group-tree rules (docs/api.md#hierarchy-demo-groups-and-tags) as pure functions, without a database.
import { describe, expect, it } from 'vitest';
import {
  assertMergedPropertiesWithinBound,
  checkedParentTeamId,
  computedMapping,
  computedProperties,
  MAX_COMPUTED_PROPERTIES_BYTES,
  MAX_HIERARCHY_DEPTH,
  sortedTags,
} from '../../src/domain/user-groups/hierarchy.rules.js';
import type { JsonObject } from '../../src/domain/common.records.js';
import type { AncestorValues, MappingEntry } from '../../src/domain/user-groups/user-group.records.js';
import { refusalOf } from '../support/refusal.js';

/** The code a parent link is refused with (always naming the parent field), or null. */
const codeOf = (link: () => void): string | null => {
  const refusal = refusalOf(link);
  if (refusal) expect(refusal.field).toBe('parent_user_group_id');
  return refusal?.code ?? null;
};

describe('checkedParentTeamId', () => {
  it('allows a link while the tree stays within four levels', () => {
    expect(MAX_HIERARCHY_DEPTH).toBe(4);
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [1], subtreeHeight: 1 }))).toBeNull();
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [3, 2, 1], subtreeHeight: 1 }))).toBeNull();
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [1], teamId: 9, subtreeHeight: 3 }))).toBeNull();
    // The parent itself is the one to link under.
    expect(checkedParentTeamId('p', { parentChain: [3, 2, 1], subtreeHeight: 1 })).toBe(3);
  });

  it('refuses a parent that is not there', () => {
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [], subtreeHeight: 1 }))).toBe('unknown_parent');
  });

  it('refuses the group itself or any of its descendants as its parent, before depth', () => {
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [9], teamId: 9, subtreeHeight: 1 }))).toBe(
      'hierarchy_cycle',
    );
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [4, 3, 9, 1, 0], teamId: 9, subtreeHeight: 4 }))).toBe(
      'hierarchy_cycle',
    );
  });

  it('refuses a fifth level, counting the moved subtree', () => {
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [4, 3, 2, 1], subtreeHeight: 1 }))).toBe(
      'hierarchy_too_deep',
    );
    expect(codeOf(() => checkedParentTeamId('p', { parentChain: [2, 1], teamId: 9, subtreeHeight: 3 }))).toBe(
      'hierarchy_too_deep',
    );
  });
});

describe('computed properties and mapping', () => {
  const entry = (schemaId: number, dataSourceId: number): MappingEntry => ({ schemaId, dataSourceId });
  const group = (
    properties: JsonObject | null,
    mapping: MappingEntry[],
    ancestors: Pick<AncestorValues, 'properties' | 'mapping'>[],
  ) => ({
    properties,
    mapping,
    ancestors,
  });

  it('merges top-level keys from the root down, the nearer level winning, null included', () => {
    const ancestors: Pick<AncestorValues, 'properties' | 'mapping'>[] = [
      { properties: { region: 'emea', nested: { b: 2 } }, mapping: [] },
      { properties: null, mapping: [] },
      { properties: { plan: 'pro', region: 'none', nested: { a: 1 }, gone: 1 }, mapping: [] },
    ];
    expect(computedProperties(group({ gone: null, city: 'Lyon' }, [], ancestors))).toEqual({
      plan: 'pro',
      region: 'emea',
      nested: { b: 2 },
      gone: null,
      city: 'Lyon',
    });
    expect(computedProperties(group(null, [], []))).toEqual({});
  });

  it('keeps any key as an own property, __proto__ included', () => {
    const properties = JSON.parse('{"__proto__": {"polluted": true}}') as JsonObject;
    // Under a parent, so that the merge itself runs (a root returns its own properties as they are).
    const merged = computedProperties(group(properties, [], [{ properties: { inherited: 1 }, mapping: [] }]));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toEqual(['inherited', '__proto__']);
  });

  it('merges the mapping schema by schema, the nearer level winning, sorted by schema id', () => {
    const ancestors: Pick<AncestorValues, 'properties' | 'mapping'>[] = [
      { properties: null, mapping: [entry(2, 20)] },
      { properties: null, mapping: [entry(1, 10), entry(2, 11), entry(5, 50)] },
    ];
    expect(computedMapping(group(null, [entry(5, 51)], ancestors))).toEqual([entry(1, 10), entry(2, 20), entry(5, 51)]);
  });
});

describe('sortedTags', () => {
  it("orders by code point, as both engines' binary collation does (not by UTF-16 unit)", () => {
    // U+FF5E sorts before U+1F680 by code point, after it by UTF-16 unit (0xD83D).
    expect(sortedTags(['🚀', '～', 'b', 'B', 'a'])).toEqual(['B', 'a', 'b', '～', '🚀']);
    expect(['🚀', '～'].sort()).toEqual(['🚀', '～']);
  });
});

describe('the bound on merged properties', () => {
  /** Ancestors (root first) and own properties whose merge serialises to exactly `bytes`, with a multi-byte character and an escape. */
  const levelsWeighing = (bytes: number): { ancestors: JsonObject[]; own: JsonObject } => {
    const ancestors: JsonObject[] = [{ shared: 'hidden by the child', 'é"': 1 }, { n: [1, { x: null }] }];
    const own: JsonObject = { shared: '' };
    const merged = computedProperties({
      properties: own,
      mapping: [],
      ancestors: [...ancestors].reverse().map((properties) => ({ properties, mapping: [] })),
    });
    const padding = bytes - Buffer.byteLength(JSON.stringify(merged));
    own.shared = 'x'.repeat(padding);
    return { ancestors, own };
  };
  const check = (bytes: number, before?: number) => {
    const after = levelsWeighing(bytes);
    const was = before === undefined ? undefined : levelsWeighing(before);
    return () =>
      assertMergedPropertiesWithinBound({
        providedId: 'g',
        links: false,
        after: { ancestors: [...after.ancestors].reverse(), properties: after.own },
        ...(was ? { teamId: 1, before: { ancestors: [...was.ancestors].reverse(), properties: was.own } } : {}),
        descendants: [],
      });
  };

  it('measures the merge exactly as JSON serialises it: the bound itself passes, one byte more does not', () => {
    expect(check(MAX_COMPUTED_PROPERTIES_BYTES)).not.toThrow();
    expect(refusalOf(check(MAX_COMPUTED_PROPERTIES_BYTES + 1))).toMatchObject({
      code: 'invalid_field',
      field: 'properties',
    });
  });

  it('lets a group already over the bound stay as large or shrink, not grow', () => {
    const over = MAX_COMPUTED_PROPERTIES_BYTES + 1000;
    expect(check(over, over)).not.toThrow();
    expect(check(over - 10, over)).not.toThrow();
    expect(refusalOf(check(over + 1, over))).toMatchObject({ code: 'invalid_field' });
  });
});
