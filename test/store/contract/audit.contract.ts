import { describe, expect, it } from 'vitest';
import type { AuditContext, AuditEventRecord } from '../../../src/domain/audit/audit.records.js';
import type { AuditEventQuery } from '../../../src/domain/audit/audit.port.js';
import {
  allPages,
  API_ACTOR,
  auditContext,
  auditWrittenBy,
  createGroup,
  newApiToken,
  newGroup,
  onlyOne,
  randomHex,
  SAMPLE_CHANGES,
  T0,
  T1,
  T2,
} from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeAuditContract(t: ContractContext): void {
  const apiContext: AuditContext = { at: T2, actor: API_ACTOR, requestId: 'req-42', changes: SAMPLE_CHANGES };

  /** The single audit event of the fixture's workspace that `action` wrote. */
  const auditOf = async (action: () => Promise<unknown>, workspaceId = t.fx.workspace.id): Promise<AuditEventRecord> =>
    onlyOne(await auditWrittenBy(t.store, workspaceId, action));

  describe('audit: user group changes', () => {
    it('records a creation with actor, tenant, group, changes and request id', async () => {
      const event = await auditOf(() => t.store.insertUserGroupIfAbsent(newGroup(t.fx.testing, 'g1'), apiContext));
      const group = await t.store.findUserGroupByProvidedId(t.fx.testing, 'g1');
      expect(event).toEqual({
        id: expect.any(Number),
        at: T2,
        workspaceId: t.fx.workspace.id,
        environment: 'Testing',
        actor: API_ACTOR,
        action: 'user_group.created',
        teamId: group?.teamId,
        providedId: 'g1',
        changes: SAMPLE_CHANGES,
        requestId: 'req-42',
        syncId: null,
      });
    });

    it('records nothing when get-or-create found the group', async () => {
      await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g1'), auditContext());
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g1'), apiContext),
      );
      expect(events).toEqual([]);
    });

    it('records an update under the new provided id, a rotation and a deletion', async () => {
      const { group } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g1'), auditContext());
      const tenant = t.fx.customer;
      const renamed = await t.store.updateUserGroup(
        { tenant, teamId: group.teamId, expectedVersion: 1, patch: { providedId: 'g1-new' }, updatedAt: T1 },
        { ...apiContext, changes: { provided_id: { before: 'g1', after: 'g1-new' } } },
      );
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        await t.store.rotateUserGroupToken(
          {
            tenant,
            currentTokenHash: group.tokenHash,
            newTokenHash: randomHex(),
            newTokenCiphertext: 'c',
            updatedAt: T2,
          },
          { at: T2, actor: API_ACTOR, requestId: null },
        );
        await t.store.deleteUserGroup(tenant, group.teamId, 3, auditContext());
      });
      const [updated] = await t.store.listAuditEvents({
        workspaceId: t.fx.workspace.id,
        action: 'user_group.updated',
        limit: 1,
      });
      expect(renamed?.providedId).toBe('g1-new');
      expect(updated).toMatchObject({
        teamId: group.teamId,
        providedId: 'g1-new',
        changes: { provided_id: { before: 'g1', after: 'g1-new' } },
      });
      expect(
        events.map(({ action, teamId, providedId, environment, changes, requestId }) => ({
          action,
          teamId,
          providedId,
          environment,
          changes,
          requestId,
        })),
      ).toEqual([
        {
          action: 'user_group.token_rotated',
          teamId: group.teamId,
          providedId: 'g1-new',
          environment: 'Customer',
          changes: null,
          requestId: null,
        },
        {
          action: 'user_group.deleted',
          teamId: group.teamId,
          providedId: 'g1-new',
          environment: 'Customer',
          changes: null,
          requestId: 'req-1',
        },
      ]);
      expect(events[1]?.actor).toEqual({ type: 'cli' });
    });

    it('records nothing for a failed or refused change', async () => {
      const { group } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g1'), auditContext());
      await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g2'), auditContext());
      const tenant = t.fx.customer;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        const rename = { tenant, teamId: group.teamId, expectedVersion: 1, patch: { providedId: 'g2' }, updatedAt: T1 };
        await t.store.updateUserGroup(rename, apiContext).catch(() => null);
        await t.store.updateUserGroup({ ...rename, patch: { name: 'x' }, expectedVersion: 9 }, apiContext);
        await t.store.rotateUserGroupToken(
          { tenant, currentTokenHash: randomHex(), newTokenHash: randomHex(), newTokenCiphertext: 'c', updatedAt: T2 },
          apiContext,
        );
        await t.store.deleteUserGroup(tenant, group.teamId, 9, apiContext);
        await t.store.insertSchema(t.fx.workspace.id, 'sales', apiContext).catch(() => null);
        await t.store.revokeApiToken(t.fx.workspace.id, 999_999, apiContext);
      });
      expect(events).toEqual([]);
    });
  });

  describe('audit: administration', () => {
    it('records a workspace creation in the new workspace, without environment, and none when it existed', async () => {
      const created = await t.store.createWorkspace('initech', apiContext);
      const [event] = await t.store.listAuditEvents({ workspaceId: created.id, limit: 10 });
      expect(event).toMatchObject({
        action: 'workspace.created',
        workspaceId: created.id,
        environment: null,
        actor: API_ACTOR,
      });
      const events = await auditWrittenBy(t.store, created.id, () => t.store.ensureWorkspace('initech', apiContext));
      expect(events).toEqual([]);
    });

    it('records each created API token without its hash, and a revocation', async () => {
      const input = newApiToken(t.fx.testing, { name: 'ci', scope: 'read' });
      const created = await auditOf(() => t.store.insertApiToken(input, apiContext));
      const [record] = await t.store.listApiTokens(t.fx.workspace.id);
      expect(created).toMatchObject({
        action: 'api_token.created',
        environment: 'Testing',
        actor: API_ACTOR,
        teamId: null,
        providedId: null,
        changes: {
          id: { before: null, after: record?.id },
          name: { before: null, after: 'ci' },
          scope: { before: null, after: 'read' },
          environment: { before: null, after: 'Testing' },
        },
      });
      expect(JSON.stringify(created)).not.toContain(input.tokenHash);
      const revoked = await auditOf(() => t.store.revokeApiToken(t.fx.workspace.id, record?.id ?? 0, apiContext));
      expect(revoked).toMatchObject({ action: 'api_token.revoked', environment: 'Testing', actor: API_ACTOR });
    });

    it('records one event per token of a first start, and none when the workspace had tokens', async () => {
      const tokens = [newApiToken(t.fx.customer), newApiToken(t.fx.testing)];
      const first = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, tokens, apiContext),
      );
      expect(first.map((event) => [event.action, event.environment])).toEqual([
        ['api_token.created', 'Customer'],
        ['api_token.created', 'Testing'],
      ]);
      const second = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, [newApiToken(t.fx.customer)], apiContext),
      );
      expect(second).toEqual([]);
    });

    it('records schema and data source creations, and no bookkeeping', async () => {
      const schema = await auditOf(() => t.store.insertSchema(t.fx.workspace.id, 'finance', apiContext));
      expect(schema).toMatchObject({
        action: 'schema.created',
        environment: null,
        actor: API_ACTOR,
        requestId: 'req-42',
        syncId: null,
      });
      const source = { tenant: t.fx.testing, providedId: '213', name: 'DW', schemaId: t.fx.schemaA.id, createdAt: T1 };
      const dataSource = await auditOf(() => t.store.insertDataSource(source, apiContext));
      expect(dataSource).toMatchObject({
        action: 'data_source.created',
        environment: 'Testing',
        providedId: '213',
        teamId: null,
      });
      const token = await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext());
      expect(await auditWrittenBy(t.store, t.fx.workspace.id, () => t.store.recordApiTokenUse(token.id, T2))).toEqual(
        [],
      );
    });

    it('records a data source update with the given changes, under its new provided id', async () => {
      const { workspace, testingA } = t.fx;
      const changes = { provided_id: { before: 'ds-a', after: 'ds-z' } };
      const event = await auditOf(() =>
        t.store.updateDataSource(workspace.id, testingA.id, { providedId: 'ds-z' }, { ...apiContext, changes }),
      );
      expect(event).toEqual({
        id: expect.any(Number),
        at: T2,
        workspaceId: workspace.id,
        environment: 'Testing',
        actor: API_ACTOR,
        action: 'data_source.updated',
        teamId: null,
        providedId: 'ds-z',
        changes,
        requestId: 'req-42',
        syncId: null,
      });
    });

    it('records a data source deletion with every field of it as a before-value', async () => {
      const { workspace, customerA } = t.fx;
      const event = await auditOf(() => t.store.deleteDataSource(workspace.id, customerA.id, apiContext));
      expect(event).toMatchObject({
        action: 'data_source.deleted',
        environment: 'Customer',
        providedId: 'ds-a',
        teamId: null,
        actor: API_ACTOR,
        changes: {
          id: { before: customerA.id, after: null },
          provided_id: { before: 'ds-a', after: null },
          name: { before: customerA.name, after: null },
          schema_id: { before: customerA.schemaId, after: null },
        },
      });
    });

    it('records nothing for a refused or missing data source change', async () => {
      const { workspace, customerA, customerB, schemaA } = t.fx;
      await createGroup(t.store, t.fx.customer, 'user', {
        mapping: [{ schemaId: customerB.schemaId, dataSourceId: customerB.id }],
      });
      const events = await auditWrittenBy(t.store, workspace.id, async () => {
        await t.store.updateDataSource(workspace.id, customerB.id, { schemaId: schemaA.id }, apiContext);
        await t.store.deleteDataSource(workspace.id, customerB.id, apiContext);
        await t.store.updateDataSource(workspace.id, customerA.id + 1000, { name: 'x' }, apiContext);
        await t.store.deleteDataSource(t.fx.otherWorkspace.id, customerA.id, apiContext);
        await t.store
          .updateDataSource(workspace.id, customerA.id, { providedId: 'ds-b' }, apiContext)
          .catch(() => null);
      });
      expect(events).toEqual([]);
    });
  });

  describe('audit: listing', () => {
    const list = (query: Partial<AuditEventQuery>) =>
      t.store.listAuditEvents({ workspaceId: t.fx.workspace.id, limit: 100, ...query });

    it('lists newest first, filtered by environment, team and action, limited, and per workspace', async () => {
      const { group: a } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'a'), auditContext());
      const { group: b } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.testing, 'b'), auditContext());
      await t.store.updateUserGroup(
        { tenant: t.fx.customer, teamId: a.teamId, expectedVersion: 1, patch: { name: 'A' }, updatedAt: T1 },
        auditContext(),
      );
      await t.store.insertUserGroupIfAbsent(newGroup(t.fx.otherCustomer, 'a'), auditContext());
      const brief = (events: AuditEventRecord[]) => events.map((event) => [event.action, event.providedId]);

      const all = await list({});
      expect(all.map((event) => event.id)).toEqual([...all.map((event) => event.id)].sort((x, y) => y - x));
      expect(brief(await list({ limit: 3 }))).toEqual([
        ['user_group.updated', 'a'],
        ['user_group.created', 'b'],
        ['user_group.created', 'a'],
      ]);
      expect(brief(await list({ environment: 'Testing', action: 'user_group.created' }))).toEqual([
        ['user_group.created', 'b'],
      ]);
      expect(brief(await list({ teamId: a.teamId }))).toEqual([
        ['user_group.updated', 'a'],
        ['user_group.created', 'a'],
      ]);
      expect(brief(await list({ teamId: b.teamId, environment: 'Customer' }))).toEqual([]);
      const other = await t.store.listAuditEvents({
        workspaceId: t.fx.otherWorkspace.id,
        action: 'user_group.created',
        limit: 10,
      });
      expect(brief(other)).toEqual([['user_group.created', 'a']]);
    });

    it('filters by since (inclusive) and until (exclusive)', async () => {
      for (const [providedId, at] of [
        ['t0', T0],
        ['t1', T1],
        ['t2', T2],
      ] as const) {
        await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, providedId), auditContext({ at }));
      }
      const created = (query: Partial<AuditEventQuery>) =>
        list({ action: 'user_group.created', ...query }).then((events) => events.map((event) => event.providedId));
      expect(await created({ since: T1 })).toEqual(['t2', 't1']);
      expect(await created({ until: T1 })).toEqual(['t0']);
      expect(await created({ since: T1, until: T2 })).toEqual(['t1']);
      expect(await created({ since: T2, until: T2 })).toEqual([]);
      expect(await created({ since: '2026-11-22T10:00:00.001Z' })).toEqual(['t2', 't1']);
      const everything = await list({ until: T1 });
      expect(everything.length).toBeGreaterThan(1);
      for (const event of everything) expect(event.at < T1).toBe(true);
    });

    it('pages newest first with the beforeId cursor, alone and with filters, covering every event once', async () => {
      const groups = [];
      for (let i = 0; i < 4; i++)
        groups.push(await createGroup(t.store, i % 2 === 0 ? t.fx.customer : t.fx.testing, `g${i}`));
      for (const group of groups) {
        const tenant = { workspaceId: group.workspaceId, environment: group.environment };
        await t.store.updateUserGroup(
          { tenant, teamId: group.teamId, expectedVersion: 1, patch: { name: 'n' }, updatedAt: T1 },
          auditContext({ at: T1 }),
        );
      }
      const filters: Partial<AuditEventQuery>[] = [
        {},
        { environment: 'Testing' },
        { action: 'user_group.updated' },
        { teamId: groups[2]!.teamId },
        { since: T1, environment: 'Customer' },
      ];
      for (const filter of filters) {
        const whole = await list(filter);
        expect(whole.length).toBeGreaterThan(1);
        for (const limit of [1, 2, 3]) {
          const pages = await allPages(
            limit,
            (beforeId) => list({ ...filter, beforeId, limit }),
            (last) => last.id,
          );
          expect(pages.flat()).toEqual(whole);
        }
      }
      const [newest] = await list({ limit: 1 });
      expect(await list({ beforeId: newest!.id + 1, limit: 1 })).toEqual([newest]);
      expect(await list({ beforeId: 1 })).toEqual([]);
    });
  });
}
