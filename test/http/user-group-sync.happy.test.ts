// Sync (docs/api.md#sync-tenants-as-code) over HTTP: tenants as code — a plan per group, applied all or nothing, idempotent.
import { describe, expect, it } from 'vitest';
import { webhookEventFromRow, type WebhookEventRow } from '../../src/store/webhook-outbox.js';
import { webhookPayload } from '../../src/webhooks/webhook-payload.js';
import { ADMIN, adminOk, adminReader } from './admin-helpers.js';
import { expectUnchanged, seedCatalog, snapshotDatabase } from './helpers.js';
import { fleet, ndjson, syncCall, syncOk, type SyncLine } from './sync-helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { listAll } from '../support/paged-list.js';
import { adminCaller } from '../support/callers.js';
import { useTestApp } from '../support/test-app.js';

describe('POST /api/admin/user_groups/sync', () => {
  const fixture = useTestApp();

  const tagged = async (tag: string) => listAll(adminReader(fixture.t), ADMIN.userGroups, 'user_groups', { tag });

  it(
    'applies a 1 000-group file, parents before children, and a second apply plans nothing',
    { timeout: 120_000 },
    async () => {
      const { t } = fixture;
      const prefix = uniqueId('fleet');
      const tag = uniqueId('tag');
      // Children listed before their parents: the plan orders them.
      const lines = fleet(prefix, 1000, tag).reverse();

      const first = await syncOk(t, lines);
      expect(first.applied).toBe(true);
      expect(first.dry_run).toBe(false);
      expect(first.id).toMatch(/^sync_[0-9a-f]{24}$/);
      expect(first.summary).toEqual({ create: 1000, update: 0, unchanged: 0, delete: 0 });
      expect(first.plan).toHaveLength(1000);
      expect(first.plan[0]).toEqual({
        action: 'create',
        user_group_id: `${prefix}-999`,
        team_id: null,
        line: 1,
        changes: {
          provided_id: { before: null, after: `${prefix}-999` },
          name: { before: null, after: 'Customer 999' },
          properties: { before: null, after: { plan: 'pro', seats: 999 } },
          mapping: { before: null, after: {} },
          parent_user_group_id: { before: null, after: `${prefix}-990` },
          tags: { before: null, after: [tag] },
        },
      });
      // Tokens are never part of the plan.
      expect(JSON.stringify(first)).not.toMatch(/ugt_/);

      const groups = await tagged(tag);
      expect(groups).toHaveLength(1000);
      const child = groups.find((group) => group.provided_id === `${prefix}-15`);
      expect(child).toMatchObject({
        name: 'Customer 15',
        parent_user_group_id: `${prefix}-10`,
        computed_properties: { plan: 'pro', seats: 15 },
        tags: [tag],
        is_demo_group: false,
        token: expect.stringMatching(/^ugt_[0-9a-f]{64}$/),
      });

      const second = await expectUnchanged(t, () => syncOk(t, lines));
      expect(second.applied).toBe(false);
      expect(second.summary).toEqual({ create: 0, update: 0, unchanged: 1000, delete: 0 });
      expect(second.plan.every((item: { action: string; team_id: number }) => item.action === 'unchanged')).toBe(true);
    },
  );

  it(
    'plans exactly the edits of an edited file, with before and after, and applies only them',
    { timeout: 120_000 },
    async () => {
      const { t } = fixture;
      const prefix = uniqueId('edit');
      const tag = uniqueId('tag');
      const lines = fleet(prefix, 30, tag);
      await syncOk(t, lines);

      const edited: SyncLine[] = lines.map((line) => ({ ...line }));
      edited[3] = { ...edited[3], name: 'Renamed' };
      edited[12] = { ...edited[12], properties: null, is_demo_group: true };
      // Moved under another root; and a root whose tags a null clears.
      edited[25] = { ...edited[25], parent_user_group_id: `${prefix}-0` };
      edited[20] = { ...edited[20], tags: null };
      // A field left out stays as it is.
      const { name: _name, properties: _properties, ...sparse } = edited[7] as Record<string, unknown>;
      edited[7] = sparse;

      const dry = await expectUnchanged(t, () => syncOk(t, edited, { dryRun: true }));
      expect(dry).toMatchObject({ dry_run: true, applied: false });
      expect(dry.summary).toEqual({ create: 0, update: 4, unchanged: 26, delete: 0 });
      const updates = dry.plan.filter((item: { action: string }) => item.action === 'update');
      expect(updates).toEqual([
        {
          action: 'update',
          user_group_id: `${prefix}-3`,
          team_id: expect.any(Number),
          line: 4,
          changes: { name: { before: 'Customer 3', after: 'Renamed' } },
        },
        {
          action: 'update',
          user_group_id: `${prefix}-12`,
          team_id: expect.any(Number),
          line: 13,
          changes: {
            properties: { before: { plan: 'pro', seats: 12 }, after: null },
            is_demo_group: { before: false, after: true },
          },
        },
        {
          action: 'update',
          user_group_id: `${prefix}-20`,
          team_id: expect.any(Number),
          line: 21,
          changes: { tags: { before: [tag], after: [] } },
        },
        {
          action: 'update',
          user_group_id: `${prefix}-25`,
          team_id: expect.any(Number),
          line: 26,
          changes: { parent_user_group_id: { before: `${prefix}-20`, after: `${prefix}-0` } },
        },
      ]);

      const before = await snapshotDatabase(t);
      const applied = await syncOk(t, edited);
      expect(applied).toMatchObject({ applied: true, summary: dry.summary, plan: dry.plan });
      const after = await snapshotDatabase(t);
      // Four groups changed and nothing else did; each has one audit event, marked with the sync.
      const unchangedRows = new Set((before.user_groups ?? []).map((row) => JSON.stringify(row)));
      const changedRows = (after.user_groups ?? []).filter((row) => !unchangedRows.has(JSON.stringify(row)));
      expect(changedRows.map((row) => (row as { provided_id: string }).provided_id).sort()).toEqual(
        [`${prefix}-12`, `${prefix}-20`, `${prefix}-25`, `${prefix}-3`].sort(),
      );
      const events = await adminOk(t, { path: ADMIN.auditEvents, query: { action: 'user_group.updated', limit: 4 } });
      expect(events.audit_events.map((event: { sync_id: string }) => event.sync_id)).toEqual(Array(4).fill(applied.id));
      expect(await syncOk(t, edited)).toMatchObject({ applied: false, summary: { unchanged: 30 } });
    },
  );

  it('takes a JSON array, naming groups by index, and resolves mappings as the single operations do', async () => {
    const { t } = fixture;
    const catalog = await seedCatalog(t);
    const id = uniqueId('array');
    const sync = await syncOk(
      t,
      [
        { user_group_id: id, mapping: { [catalog.schemaA]: catalog.dsA.providedId } },
        { user_group_id: 7_000_000 + Number(id.replace(/\D/g, '').slice(-6)), name: 'Numeric id' },
      ],
      { array: true },
    );
    expect(sync.plan.map((item: { index: number; action: string }) => [item.index, item.action])).toEqual([
      [0, 'create'],
      [1, 'create'],
    ]);
    expect(sync.plan[0].changes.mapping).toEqual({
      after: { [catalog.schemaA]: String(catalog.dsA.id) },
      before: null,
    });
  });

  it('prunes only the groups carrying the tag that the file leaves out; get-or-create groups survive', async () => {
    const { t } = fixture;
    const prefix = uniqueId('prune');
    const tag = uniqueId('tag');
    const lines = fleet(prefix, 20, tag);
    await syncOk(t, lines);
    const caller = await adminCaller(t);
    // The application's own groups: one without tags, one with another tag, made by get-or-create.
    const appGroup = uniqueId('app');
    await t.runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: appGroup });
    const otherTagged = uniqueId('app-tagged');
    await t.runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: otherTagged, tags: ['other'] });

    // The file drops the tree of root 10 (children and root) and one leaf of root 0.
    const kept = lines.filter((_, i) => i < 10 && i !== 4);
    const dry = await expectUnchanged(t, () => syncOk(t, kept, { prune: tag, dryRun: true }));
    expect(dry.summary).toEqual({ create: 0, update: 0, unchanged: 9, delete: 11 });
    const deleted = dry.plan.filter((item: { action: string }) => item.action === 'delete');
    // Children before their parent.
    expect(deleted.at(-1).user_group_id).toBe(`${prefix}-10`);
    expect(deleted.map((item: { user_group_id: string }) => item.user_group_id).sort()).toEqual(
      [4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((i) => `${prefix}-${i}`).sort(),
    );
    expect(deleted[0].changes.provided_id.after).toBeNull();

    const applied = await syncOk(t, kept, { prune: tag });
    expect(applied.summary).toEqual(dry.summary);
    expect((await tagged(tag)).map((group) => group.provided_id).sort()).toEqual(
      kept.map((line) => line.user_group_id).sort(),
    );
    const survivors = await listAll(adminReader(t), ADMIN.userGroups, 'user_groups', { q: appGroup });
    expect(survivors.map((group) => group.provided_id)).toEqual([appGroup]);
    expect((await tagged('other')).map((group) => group.provided_id)).toContain(otherTagged);
    const deletions = await adminOk(t, { path: ADMIN.auditEvents, query: { action: 'user_group.deleted', limit: 11 } });
    expect(new Set(deletions.audit_events.map((event: { sync_id: string }) => event.sync_id))).toEqual(
      new Set([applied.id]),
    );
    expect(await syncOk(t, kept, { prune: tag })).toMatchObject({ applied: false, summary: { delete: 0 } });
  });

  it("announces every change to webhooks with the sync's id", async () => {
    const { t } = fixture;
    const caller = await adminCaller(t);
    await t.runtime.services.webhookEndpoints.create(caller, {
      url: 'https://hooks.example.com/sync',
      events: ['user_group.created'],
    });
    const id = uniqueId('hooked');
    const sync = await syncOk(t, [{ user_group_id: id }]);
    const events = ((await snapshotDatabase(t)).webhook_events ?? []) as unknown as WebhookEventRow[];
    const event = events.find((row) => JSON.parse(row.body).subject.userGroup.providedId === id);
    if (!event) throw new Error('no webhook event for the synced group');
    const payload = JSON.parse(
      webhookPayload(webhookEventFromRow({ ...event, created_at: String(event.created_at) }), 'default'),
    );
    expect(payload).toMatchObject({
      type: 'user_group.created',
      sync_id: sync.id,
      data: { user_group: { provided_id: id } },
    });
    expect(JSON.stringify(payload)).not.toMatch(/ugt_/);
  });

  it('accepts a body beyond the 1 MiB of other routes', async () => {
    const { t } = fixture;
    const prefix = uniqueId('big');
    const lines = Array.from({ length: 300 }, (_, i) => ({
      user_group_id: `${prefix}-${i}`,
      properties: { padding: 'x'.repeat(4000) },
    }));
    expect(ndjson(lines).length).toBeGreaterThan(1024 * 1024);
    const response = await syncCall(t, lines, { dryRun: true });
    expect(response.status).toBe(200);
    expect(response.body.sync.summary.create).toBe(300);
  });
});
