// The user-group rules that are pure functions, without a database: diffs for PUT and imports,
// mapping resolution against a catalogue, paging, the limits on properties, echoed caller text.
import { describe, expect, it } from 'vitest';
import { echoable, ECHO_LIMIT } from '../../src/domain/echoed-text.rules.js';
import { createMappingResolver } from '../../src/domain/user-groups/mapping.js';
import type { JsonObject } from '../../src/domain/common.records.js';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import type { UserGroupRecord } from '../../src/domain/user-groups/user-group.records.js';
import { fetchPage } from '../../src/domain/pagination.js';
import { assertPropertiesWithinLimits } from '../../src/domain/user-groups/properties.rules.js';
import { MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH } from '../../src/wire/contract.constants.js';
import type { Tenant } from '../../src/domain/tenancy.js';
import { diffUserGroup, wholeGroupChanges } from '../../src/domain/user-groups/user-group-diff.rules.js';
import { refusalOf } from '../support/refusal.js';

const T = '2026-11-25T10:00:00.000Z';

const stored: UserGroupRecord = {
  teamId: 7,
  workspaceId: 1,
  environment: 'Customer',
  providedId: 'acme',
  name: 'Acme',
  tokenHash: 'hash',
  tokenCiphertext: 'cipher',
  properties: { plan: 'pro' },
  mapping: [{ schemaId: 1, dataSourceId: 10 }],
  parentProvidedId: 'holding',
  ancestors: [{ teamId: 6, properties: null, mapping: [], accessRules: [] }],
  isDemoGroup: false,
  tags: ['a', 'b'],
  accessRules: [],
  version: 3,
  tokenGeneration: 0,
  createdAt: T,
  updatedAt: T,
};

const codeOf = (work: () => unknown): string | null => refusalOf(work)?.code ?? null;

describe('diffUserGroup', () => {
  it('keeps only what differs, with before and after under the wire names', () => {
    const { patch, changes } = diffUserGroup(stored, {
      name: 'Acme',
      properties: { plan: 'enterprise' },
      mapping: [{ schemaId: 1, dataSourceId: 10 }],
      parentProvidedId: null,
      isDemoGroup: true,
      tags: ['a', 'b'],
    });
    expect(patch).toEqual({ properties: { plan: 'enterprise' }, parentProvidedId: null, isDemoGroup: true });
    expect(changes).toEqual({
      properties: { before: { plan: 'pro' }, after: { plan: 'enterprise' } },
      parent_user_group_id: { before: 'holding', after: null },
      is_demo_group: { before: false, after: true },
    });
  });

  it('writes nothing for a request equal to the stored group, and never records a token value', () => {
    expect(diffUserGroup(stored, { providedId: 'acme', tags: ['a', 'b'], properties: { plan: 'pro' } })).toEqual({
      patch: {},
      changes: {},
    });
    const { patch, changes } = diffUserGroup(stored, { tokenHash: 'new-hash', tokenCiphertext: 'new-cipher' });
    expect(patch).toEqual({ tokenHash: 'new-hash', tokenCiphertext: 'new-cipher' });
    expect(changes).toEqual({ token: { before: '[redacted]', after: '[redacted]' } });
  });

  it('records a mapping change as schema id → data source id strings', () => {
    expect(diffUserGroup(stored, { mapping: [] }).changes).toEqual({ mapping: { before: { 1: '10' }, after: {} } });
  });
});

describe('wholeGroupChanges', () => {
  it('records a group coming into being without its absent values and defaults', () => {
    expect(wholeGroupChanges({ ...stored, properties: null, parentProvidedId: null, tags: [] }, true)).toEqual({
      provided_id: { before: null, after: 'acme' },
      name: { before: null, after: 'Acme' },
      mapping: { before: null, after: { 1: '10' } },
    });
    expect(wholeGroupChanges({ ...stored, isDemoGroup: true }, false)).toMatchObject({
      parent_user_group_id: { before: 'holding', after: null },
      is_demo_group: { before: true, after: null },
      tags: { before: ['a', 'b'], after: null },
    });
  });
});

describe('mapping resolution', () => {
  const tenant: Tenant = { workspaceId: 1, environment: 'Customer' };
  const dataSource = (id: number, providedId: string, schemaId: number): DataSourceRecord => ({
    id,
    workspaceId: 1,
    environment: 'Customer',
    providedId,
    name: providedId,
    schemaId,
    shared: false,
    createdAt: T,
  });
  const catalogue = [dataSource(10, 'warehouse', 1), dataSource(11, '10', 2), dataSource(12, 'other', 2)];
  const lookups: string[] = [];
  const store = {
    findSchemasByIds: async (_workspaceId: number, ids: number[]) => {
      lookups.push('schemas');
      return ids
        .filter((id) => id === 1 || id === 2)
        .map((id) => ({ id, workspaceId: 1, name: `s${id}`, createdAt: T }));
    },
    findDataSources: async (_tenant: Tenant, refs: { ids: number[]; providedIds: string[] }) => {
      lookups.push('data sources');
      return catalogue.filter((source) => refs.ids.includes(source.id) || refs.providedIds.includes(source.providedId));
    },
  };

  it('resolves many inputs with two lookups: a provided id first, then a digit string as an id', async () => {
    lookups.length = 0;
    const resolve = await createMappingResolver(store, tenant, [
      { 1: 'warehouse' },
      { 2: '10' },
      { 1: 10, 2: 'other' },
    ]);
    expect(lookups.sort()).toEqual(['data sources', 'schemas']);
    expect(resolve({ 1: 'warehouse' })).toEqual([{ schemaId: 1, dataSourceId: 10 }]);
    // "10" is a data source's provided id (of schema 2) before it is data source 10's id.
    expect(resolve({ 2: '10' })).toEqual([{ schemaId: 2, dataSourceId: 11 }]);
    expect(resolve({ 2: 'other', 1: 10 })).toEqual([
      { schemaId: 1, dataSourceId: 10 },
      { schemaId: 2, dataSourceId: 12 },
    ]);
  });

  it('names what is wrong: an unknown schema, an unknown data source, one of another schema', async () => {
    const resolve = await createMappingResolver(store, tenant, [
      { 3: 'warehouse' },
      { 1: 'nowhere' },
      { 2: 'warehouse' },
    ]);
    expect(codeOf(() => resolve({ 3: 'warehouse' }))).toBe('unknown_schema');
    expect(codeOf(() => resolve({ 1: 'nowhere' }))).toBe('unknown_data_source');
    expect(codeOf(() => resolve({ 2: 'warehouse' }))).toBe('data_source_schema_mismatch');
  });
});

describe('fetchPage', () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: i + 1 }));
  const page = (limit: number, after = 0) =>
    fetchPage(
      limit,
      async (limitPlusOne) => rows.filter((row) => row.id > after).slice(0, limitPlusOne),
      (row) => row.id,
      (row) => row.id,
    );

  it('asks for one row more to know whether a next page exists, and never ends on an empty page', async () => {
    expect(await page(2)).toEqual({ items: [1, 2], next: 2 });
    expect(await page(2, 2)).toEqual({ items: [3, 4], next: 4 });
    expect(await page(2, 4)).toEqual({ items: [5], next: null });
    expect(await page(5)).toEqual({ items: [1, 2, 3, 4, 5], next: null });
  });
});

describe('limits on properties', () => {
  const nested = (depth: number): JsonObject => (depth === 1 ? { leaf: true } : { next: nested(depth - 1) });

  it('accepts what comes back exactly, up to the size and depth limits', () => {
    expect(codeOf(() => assertPropertiesWithinLimits(nested(MAX_PROPERTIES_DEPTH)))).toBeNull();
    expect(codeOf(() => assertPropertiesWithinLimits({ big: 'x'.repeat(MAX_PROPERTIES_BYTES - 20) }))).toBeNull();
    expect(codeOf(() => assertPropertiesWithinLimits(null))).toBeNull();
  });

  it('refuses depth, size, inexact numbers and text no engine stores as sent', () => {
    for (const properties of [
      nested(MAX_PROPERTIES_DEPTH + 1),
      nested(5000),
      { big: 'x'.repeat(MAX_PROPERTIES_BYTES) },
      { n: 2 ** 53 },
      { n: Number.POSITIVE_INFINITY },
      { text: 'a\u0000b' },
      { text: 'lone \ud800' },
      { ['key\u0000']: 1 },
    ] as JsonObject[]) {
      expect(codeOf(() => assertPropertiesWithinLimits(properties))).toBe('invalid_field');
    }
  });
});

describe('echoable', () => {
  it('cuts caller text to 256 code points without splitting a surrogate pair', () => {
    expect(echoable('short')).toBe('short');
    const cut = echoable('🚀'.repeat(1000));
    expect(Array.from(cut)).toHaveLength(ECHO_LIMIT);
    expect(cut).toBe('🚀'.repeat(ECHO_LIMIT));
  });
});
