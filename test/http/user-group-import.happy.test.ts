// POST /api/admin/user_groups/import: the import suite's cases (test/support/import-cases.ts) over
// HTTP, with the CLI's summary; the dry run; replace_tokens as an audited rotation; NDJSON and arrays.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookEventFromRow, type WebhookEventRow } from '../../src/store/webhook-outbox.js';
import { apiToken } from '../support/callers.js';
import { verify } from '../support/user-group-api.js';
import { adminCaller } from '../support/callers.js';
import {
  BROKEN_TREE,
  BROKEN_TREE_REFUSED,
  mixedImportFile,
  nativeToken,
  TREE_CHILDREN_FIRST,
} from '../support/import-cases.js';
import { useTestApp, type TestApp } from '../support/test-app.js';
import { CARRIED_FIELDS } from '../../src/domain/user-groups/user-group-transfer.rules.js';
import { inject, type ApiRequest } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';
import { ADMIN, adminOk } from './admin-helpers.js';
import { expectSuccess, expectUnchanged, seedSchema, snapshotDatabase } from './helpers.js';
import { expectNothingWritten, importCall, importOk } from './import-helpers.js';

describe('POST /api/admin/user_groups/import: the import suite over HTTP', () => {
  const fixture = useTestApp();

  /** Schema `sales` and a data source of it in Customer, as the CLI suite's catalog. */
  async function salesCatalog() {
    const sales = await seedSchema(fixture.t);
    const warehouse = uniqueId('warehouse');
    await fixture.t.runtime.services.dataSources.createDataSource(await adminCaller(fixture.t), {
      providedId: warehouse,
      name: 'Warehouse',
      schemaId: sales,
    });
    return { sales, warehouse };
  }

  const groupsOf = async (as: { workspace?: 'default' | 'other'; environment?: 'Customer' | 'Testing' } = {}) =>
    (await adminOk(fixture.t, { path: ADMIN.userGroups, query: { limit: '1000' }, as })).user_groups as Array<{
      provided_id: string;
      token?: string;
    }>;

  it('imports the good lines, refuses each bad one by line and reason, and stores nothing of them; rerun: unchanged', async () => {
    const { lines, good, bad } = mixedImportFile(await salesCatalog(), 'http', '1');
    const summary = await importOk(fixture.t, lines);
    expect(summary).toEqual({
      dry_run: false,
      created: good.length,
      updated: 0,
      unchanged: 0,
      rejected: bad.map(({ line }) => ({ line, reason: expect.any(String) })),
      // What each line lacked: asserted where the lacking lines are the subject.
      lacking: expect.any(Array),
      lacking_lines: expect.any(Number),
      lacking_fields: expect.any(Object),
    });
    summary.rejected.forEach(({ reason }, index) => expect(reason).toMatch(bad[index]!.reason));
    const stored = await groupsOf();
    expect(stored.map((group) => `Customer/${group.provided_id}`).sort()).toEqual([...good].sort());
    expect(stored.find((group) => group.provided_id === 'good-token')?.token).toBe(nativeToken('1'));
    expect(await groupsOf({ environment: 'Testing' })).toEqual([]);

    const again = await expectNothingWritten(fixture.t, () => importOk(fixture.t, lines));
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: good.length });
    expect(again.rejected.map(({ line }) => line)).toEqual(bad.map(({ line }) => line));
  });
});

describe('POST /api/admin/user_groups/import: a tree, in any order', () => {
  const fixture = useTestApp();

  it('imports a tree whose children come before their parents; the same lines again change nothing', async () => {
    expect(await importOk(fixture.t, TREE_CHILDREN_FIRST)).toMatchObject({ created: 5, unchanged: 0, rejected: [] });
    const city = await adminOk(fixture.t, { path: `${ADMIN.userGroups}`, query: { q: 'city' } });
    expect(city.user_groups[0]).toMatchObject({ parent_user_group_id: 'country' });
    expect(await importOk(fixture.t, [...TREE_CHILDREN_FIRST].reverse())).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: 5,
      rejected: [],
    });
  });

  it('refuses lines whose parent is nowhere or whose parents form a cycle, and imports the rest', async () => {
    const summary = await importOk(fixture.t, BROKEN_TREE);
    expect(summary).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.rejected.map(({ line }) => line)).toEqual(BROKEN_TREE_REFUSED.lines);
    for (const { reason } of summary.rejected) expect(reason).toMatch(BROKEN_TREE_REFUSED.reason);
  });
});

describe('POST /api/admin/user_groups/import?dry_run=true', () => {
  const fixture = useTestApp();

  it('answers the summary the import then gives, and writes nothing', async () => {
    const { t } = fixture;
    const sales = await seedSchema(t);
    const warehouse = uniqueId('warehouse');
    await t.runtime.services.dataSources.createDataSource(await adminCaller(t), {
      providedId: warehouse,
      name: 'Warehouse',
      schemaId: sales,
    });
    const { lines } = mixedImportFile({ sales, warehouse }, 'http', '2');
    for (const file of [lines, TREE_CHILDREN_FIRST, BROKEN_TREE]) {
      const planned = await expectUnchanged(t, () => importOk(t, file, { dryRun: true }));
      expect(planned.dry_run).toBe(true);
      const done = await importOk(t, file);
      expect({ ...planned, dry_run: false }).toEqual(done);
    }
  });

  it('ignores an Idempotency-Key, as a read does', async () => {
    const lines = [{ provided_id: uniqueId('dry-keyed') }];
    const headers = { 'idempotency-key': uniqueId('key') };
    await expectUnchanged(fixture.t, async () => {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const response = await importCall(fixture.t, lines, { dryRun: true, headers });
        expect(response.headers['idempotent-replayed']).toBeUndefined();
        expect(expectSuccess(response).import).toMatchObject({ dry_run: true, created: 1 });
      }
    });
  });
});

const viaInject = (t: TestApp) => (request: ApiRequest) => inject(t.app, request);

const ALL_CARRIED = [...CARRIED_FIELDS];

describe('POST /api/admin/user_groups/import: lacking fields', () => {
  const fixture = useTestApp();

  it('reports each line lacking mapping by line, and imports it; require_fields=mapping refuses it and writes nothing of it', async () => {
    const { t } = fixture;
    const id = uniqueId('lacking');
    const full = {
      provided_id: `${id}-full`,
      name: 'Full',
      properties: {},
      mapping: null,
      parent_user_group_id: null,
      is_demo_group: false,
    };
    const noMapping = {
      provided_id: `${id}-bare`,
      name: 'Bare',
      properties: {},
      parent_user_group_id: null,
      is_demo_group: false,
    };

    // Required: the line lacking it is refused (and not written), the other imported.
    expect(await importOk(t, [full, noMapping], { requireFields: 'mapping, is_demo_group' })).toEqual({
      dry_run: false,
      created: 1,
      updated: 0,
      unchanged: 0,
      rejected: [{ line: 2, reason: 'the line lacks mapping, which is required' }],
      lacking: [],
      lacking_lines: 0,
      lacking_fields: {},
    });

    // Not required: imported all the same, and reported by its line (the first is unchanged, so the second was not written).
    expect(await importOk(t, [full, noMapping])).toEqual({
      dry_run: false,
      created: 1,
      updated: 0,
      unchanged: 1,
      rejected: [],
      lacking: [{ line: 2, provided_id: `${id}-bare`, fields: ['mapping'] }],
      lacking_lines: 1,
      lacking_fields: { mapping: { lacked: 1 } },
    });
  });
});

describe('POST /api/admin/user_groups/import: forms and tokens', () => {
  const fixture = useTestApp();

  it('takes a JSON array, naming each refused element by its index', async () => {
    const id = uniqueId('array');
    const summary = await importOk(fixture.t, [{ provided_id: id }, { provided_id: `${id}-bad`, colour: 'red' }], {
      array: true,
    });
    expect(summary).toEqual({
      dry_run: false,
      created: 1,
      updated: 0,
      unchanged: 0,
      rejected: [{ index: 1, reason: expect.stringMatching(/colour/) }],
      // Only the provided id: it lacks every field this service keeps, named by its index.
      lacking: [{ index: 0, provided_id: id, fields: ALL_CARRIED }],
      lacking_lines: 1,
      lacking_fields: Object.fromEntries(ALL_CARRIED.map((field) => [field, { lacked: 1 }])),
    });
  });

  it("takes the hosted product's groups with their tokens, which then verify as they did there", async () => {
    const { t } = fixture;
    const token = randomUUID();
    const id = uniqueId('hosted');
    const saved = {
      success: 1,
      new_user_group: true,
      user_group: { team_id: 987_654, provided_id: id, name: 'Hosted', token },
    };
    expect(await importOk(t, [saved])).toMatchObject({ created: 1, rejected: [] });
    const verified = expectSuccess(await verify(viaInject(t), apiToken(t, { scope: 'write' }), token));
    expect(verified.user_group).toMatchObject({ provided_id: id, team_id: 987_654, name: 'Hosted' });
  });

  it('replaces a token only with replace_tokens=true, as a rotation audited and announced to webhooks', async () => {
    const { t } = fixture;
    const caller = await adminCaller(t);
    await t.runtime.services.webhookEndpoints.create(caller, {
      url: 'https://hooks.example.com/import',
      events: ['user_group.token_rotated'],
    });
    const id = uniqueId('rotated');
    const [current, stale] = [randomUUID(), randomUUID()];
    expect(await importOk(t, [{ provided_id: id, token: current }])).toMatchObject({ created: 1 });

    // An export made before a rotation: its token is not put back, and nothing else of the line is written.
    const line = { provided_id: id, name: 'Renamed', token: stale };
    const refused = await expectUnchanged(t, () => importOk(t, [line]));
    expect(refused).toEqual({
      dry_run: false,
      created: 0,
      updated: 0,
      unchanged: 0,
      rejected: [{ line: 1, reason: expect.stringMatching(/replace_tokens=true/) }],
      // What each line lacked: asserted where the lacking lines are the subject.
      lacking: expect.any(Array),
      lacking_lines: expect.any(Number),
      lacking_fields: expect.any(Object),
    });
    expect(await importOk(t, [line], { dryRun: true, replaceTokens: true })).toMatchObject({ updated: 1 });

    expect(await importOk(t, [line], { replaceTokens: true })).toMatchObject({ updated: 1, rejected: [] });
    const write = apiToken(t, { scope: 'write' });
    expect(expectSuccess(await verify(viaInject(t), write, stale)).user_group).toMatchObject({ name: 'Renamed' });
    expect((await verify(viaInject(t), write, current)).status).toBe(404);
    const reader = await t.reader();
    expect(await reader.count("audit_events WHERE action = 'user_group.token_rotated' AND provided_id = ?", id)).toBe(
      1,
    );
    const events = ((await snapshotDatabase(t)).webhook_events ?? []) as unknown as WebhookEventRow[];
    const rotations = events
      .map((row) => webhookEventFromRow({ ...row, created_at: String(row.created_at) }))
      .filter((event) => event.type === 'user_group.token_rotated');
    expect(rotations).toHaveLength(1);
    for (const secret of [current, stale]) expect(JSON.stringify(events)).not.toContain(secret);

    // The same line again: the token is the group's own now, so nothing changes.
    expect(await importOk(t, [line], { replaceTokens: true })).toMatchObject({ updated: 0, unchanged: 1 });
  });
});
