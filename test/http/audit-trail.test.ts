import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/test-app.js';
import { ADMIN, adminCall, adminOk, adminReader, type AdminRequest } from './admin-helpers.js';
import { listAll } from '../support/paged-list.js';
import { expectError, expectUnchanged, seedCatalog, type Catalog } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { adminCaller, apiToken, workspaceId } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { USER_PATH } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

/** Every change writes exactly one audit event, with no token value in the table. */

interface Actor {
  type: 'api_token' | 'cli';
  api_token_id?: number;
  name?: string;
}

interface AuditEvent {
  id: number;
  at: string;
  environment: string | null;
  actor: Actor;
  action: string;
  team_id: number | null;
  provided_id: string | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  request_id: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Every row of audit_events, every column as text, read through a read-only connection of its own. */
async function rawAuditTable(t: TestApp): Promise<{ count: number; text: string }> {
  const rows = await (await t.reader()).select('SELECT * FROM audit_events ORDER BY id');
  return { count: rows.length, text: rows.map((row) => Object.values(row).map(String).join('\u0000')).join('\n') };
}

const auditEventsSince = async (t: TestApp, afterId: number): Promise<AuditEvent[]> =>
  ((await listAll(adminReader(t), ADMIN.auditEvents, 'audit_events')) as AuditEvent[]).filter(
    (event) => event.id > afterId,
  );

async function lastAuditId(t: TestApp): Promise<number> {
  const [newest] = (await adminOk(t, { path: ADMIN.auditEvents, query: { limit: 1 } })).audit_events;
  return newest?.id ?? 0;
}

describe('the audit trail: one change of every kind', () => {
  const ctx = useTestApp();

  /** What each change should have written, by action. */
  const expected = new Map<string, Partial<AuditEvent>>();
  /** Every token value the changes saw: user group tokens (current and rotated away) and API token secrets. */
  const secrets: string[] = [];
  let trail: AuditEvent[] = [];

  beforeAll(async () => {
    const { t } = ctx;
    const before = await lastAuditId(t);
    const admin = {
      secret: apiToken(t),
      record: (await t.runtime.store.listApiTokens(await workspaceId(t))).find(
        (token) => token.name === 'admin-Customer',
      )!,
    };
    const actorOf = (id: number, name: string): Actor => ({ type: 'api_token', api_token_id: id, name });

    /** Sends one change with its own request id and notes the event it must leave. */
    async function change(
      action: string,
      secret: string,
      actor: Actor,
      request: { method: string; path: string; body?: unknown },
      event: Partial<AuditEvent>,
    ) {
      const requestId = `trail-${action}`;
      const res = await adminCall(t, { ...request, token: secret, requestId });
      expect({ action, status: res.status }).toEqual({ action, status: 200 });
      expected.set(action, { action, actor, request_id: requestId, ...event });
      return res.body;
    }

    // The default admin issues the token that makes every other change.
    const auditorName = uniqueId('auditor');
    const issued = await change(
      'api_token.created',
      admin.secret,
      actorOf(admin.record.id, admin.record.name),
      { method: 'POST', path: ADMIN.apiTokens, body: { name: auditorName, scope: 'admin' } },
      {
        environment: 'Customer',
        team_id: null,
        provided_id: null,
      },
    );
    const auditor = { secret: issued.api_token.token as string, actor: actorOf(issued.api_token.id, auditorName) };
    secrets.push(auditor.secret);
    const by = (action: string, request: Parameters<typeof change>[3], event: Partial<AuditEvent>) =>
      change(action, auditor.secret, auditor.actor, request, event);

    const schemaName = uniqueId('trail schema');
    const schema = (
      await by(
        'schema.created',
        { method: 'POST', path: ADMIN.schemas, body: { name: schemaName } },
        { environment: null, team_id: null, provided_id: null },
      )
    ).schema;
    const dsId = uniqueId('trail-ds');
    const ds = (
      await by(
        'data_source.created',
        {
          method: 'POST',
          path: ADMIN.dataSources,
          body: { provided_id: dsId, name: 'Trail DS', schema_id: schema.id },
        },
        { environment: 'Customer', team_id: null, provided_id: dsId },
      )
    ).data_source;
    const groupId = uniqueId('trail-group');
    const mapping = { [schema.id]: String(ds.id) };
    const created = (
      await by(
        'user_group.created',
        { method: 'GET', path: USER_PATH, body: { user_group_id: groupId, mapping } },
        { environment: 'Customer', provided_id: groupId },
      )
    ).user_group;
    secrets.push(created.token);
    Object.assign(expected.get('user_group.created')!, {
      team_id: created.team_id,
      changes: {
        provided_id: { before: null, after: groupId },
        name: { before: null, after: groupId },
        mapping: { before: null, after: mapping },
      },
    });

    const renamed = `${groupId}-renamed`;
    await by(
      'user_group.updated',
      {
        method: 'PUT',
        path: USER_PATH,
        body: {
          user_group_id: groupId,
          new_user_group_id: renamed,
          name: 'Renamed',
          properties: { tier: 'gold' },
          mapping: {},
        },
      },
      {
        environment: 'Customer',
        team_id: created.team_id,
        provided_id: renamed,
        changes: {
          provided_id: { before: groupId, after: renamed },
          name: { before: groupId, after: 'Renamed' },
          properties: { before: null, after: { tier: 'gold' } },
          mapping: { before: mapping, after: {} },
        },
      },
    );
    const rotated = (
      await by(
        'user_group.token_rotated',
        { method: 'POST', path: USER_PATH, body: { current_token: created.token } },
        { environment: 'Customer', team_id: created.team_id, provided_id: renamed },
      )
    ).user_group;
    secrets.push(rotated.token);
    await by(
      'data_source.updated',
      { method: 'PATCH', path: `${ADMIN.dataSources}/${ds.id}`, body: { name: 'Trail DS renamed' } },
      {
        environment: 'Customer',
        team_id: null,
        provided_id: dsId,
        changes: { name: { before: 'Trail DS', after: 'Trail DS renamed' } },
      },
    );
    await by(
      'user_group.deleted',
      { method: 'DELETE', path: USER_PATH, body: { current_token: rotated.token } },
      {
        environment: 'Customer',
        team_id: created.team_id,
        provided_id: renamed,
        changes: {
          provided_id: { before: renamed, after: null },
          name: { before: 'Renamed', after: null },
          properties: { before: { tier: 'gold' }, after: null },
          mapping: { before: {}, after: null },
        },
      },
    );
    await by(
      'data_source.deleted',
      { method: 'DELETE', path: `${ADMIN.dataSources}/${ds.id}` },
      { environment: 'Customer', team_id: null, provided_id: dsId },
    );
    // Last, the auditor revokes itself.
    await by(
      'api_token.revoked',
      { method: 'DELETE', path: `${ADMIN.apiTokens}/${auditor.actor.api_token_id}` },
      { environment: 'Customer', team_id: null, provided_id: null },
    );

    trail = await auditEventsSince(t, before);
  });

  const ACTIONS = [
    'api_token.created',
    'schema.created',
    'data_source.created',
    'user_group.created',
    'user_group.updated',
    'user_group.token_rotated',
    'data_source.updated',
    'user_group.deleted',
    'data_source.deleted',
    'api_token.revoked',
  ];

  it('writes exactly one event per change, in the order of the changes', () => {
    expect(trail.map((event) => event.action)).toEqual([...ACTIONS].reverse());
  });

  it.each(ACTIONS)('%s: the right action, entity, actor and request id', (action) => {
    const matching = trail.filter((event) => event.action === action);
    expect(matching).toHaveLength(1);
    expect(matching[0]).toMatchObject(expected.get(action)!);
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'api_token.created',
      {
        name: { before: null, after: expect.stringMatching(/^auditor-/) },
        scope: { before: null, after: 'admin' },
        environment: { before: null, after: 'Customer' },
      },
    ],
    ['schema.created', { name: { before: null, after: expect.stringMatching(/^trail schema-/) } }],
    [
      'data_source.created',
      {
        provided_id: { before: null, after: expect.stringMatching(/^trail-ds-/) },
        name: { before: null, after: 'Trail DS' },
      },
    ],
    [
      'data_source.deleted',
      {
        provided_id: { before: expect.stringMatching(/^trail-ds-/), after: null },
        name: { before: 'Trail DS renamed', after: null },
      },
    ],
    ['api_token.revoked', { revoked_at: { before: null, after: expect.any(String) } }],
  ])('%s records its fields with before and after', (action, changes) => {
    expect(trail.find((event) => event.action === action)?.changes).toMatchObject(changes);
  });

  it('changes of an update hold exactly the changed fields', () => {
    for (const action of ['user_group.updated', 'data_source.updated']) {
      expect(trail.find((event) => event.action === action)?.changes).toStrictEqual(expected.get(action)!.changes);
    }
  });

  it('no event names a token among its changed fields', () => {
    for (const event of trail) expect(Object.keys(event.changes ?? {})).not.toContain('token');
  });

  it('a change made through the services as the CLI shows actor {type: cli} and no request id', async () => {
    const before = await lastAuditId(ctx.t);
    const name = uniqueId('cli schema');
    await ctx.t.runtime.services.schemas.createSchema(await adminCaller(ctx.t), { name });
    const [event, ...more] = await auditEventsSince(ctx.t, before);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      action: 'schema.created',
      actor: { type: 'cli' },
      request_id: null,
      changes: { name: { before: null, after: name } },
    });
    expect(event!.actor).toStrictEqual({ type: 'cli' });
  });

  it('the audit_events table holds no token value: no secret, no secret body, no hash of one', async () => {
    const all = [
      ...secrets,
      ...Object.values(ctx.t.tokens).flatMap((set) => Object.values(set).flatMap((byScope) => Object.values(byScope))),
    ];
    expect(all.length).toBeGreaterThan(3);
    const { count, text } = await rawAuditTable(ctx.t);
    expect(count).toBeGreaterThanOrEqual(trail.length);
    for (const secret of all) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.replace(/^(ugt|ugs_live|ugs_test)_/, ''));
      expect(text).not.toContain(sha256(secret));
    }
    expect(text).not.toMatch(/ugt_|ugs_(live|test)_/);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('a change whose transaction fails leaves no audit event', () => {
  const ctx = useTestApp();
  let catalog: Catalog;

  beforeAll(async () => {
    catalog = await seedCatalog(ctx.t);
  });

  const write = { scope: 'write' } as const;
  const FAILURES: Array<[string, () => Promise<{ request: AdminRequest; status: number; code: string }>]> = [
    [
      'a rename onto a taken id (PUT)',
      async () => {
        const [group, other] = [await makeGroup(ctx.t), await makeGroup(ctx.t)];
        return {
          request: {
            method: 'PUT',
            path: USER_PATH,
            as: write,
            body: { user_group_id: group.provided_id, new_user_group_id: other.provided_id, name: 'Not applied' },
          },
          status: 409,
          code: 'user_group_id_taken',
        };
      },
    ],
    [
      'a create mapping an unknown data source (GET)',
      async () => ({
        request: {
          method: 'GET',
          path: USER_PATH,
          as: write,
          body: { user_group_id: uniqueId('doomed'), mapping: { [catalog.schemaA]: 999_999_999 } },
        },
        status: 400,
        code: 'unknown_data_source',
      }),
    ],
    [
      'a delete of a data source in use',
      async () => {
        await makeGroup(ctx.t, { mapping: { [catalog.schemaA]: catalog.dsA.id } });
        return {
          request: { method: 'DELETE', path: `${ADMIN.dataSources}/${catalog.dsA.id}` },
          status: 409,
          code: 'data_source_in_use',
        };
      },
    ],
    [
      'a new schema for a data source in use',
      async () => {
        await makeGroup(ctx.t, { mapping: { [catalog.schemaA]: catalog.dsA.id } });
        return {
          request: {
            method: 'PATCH',
            path: `${ADMIN.dataSources}/${catalog.dsA.id}`,
            body: { schema_id: catalog.schemaB, name: 'Not applied' },
          },
          status: 409,
          code: 'data_source_in_use',
        };
      },
    ],
    [
      'a data source with a taken provided_id',
      async () => ({
        request: {
          method: 'POST',
          path: ADMIN.dataSources,
          body: { provided_id: catalog.dsB.providedId, name: 'Twin', schema_id: catalog.schemaB },
        },
        status: 409,
        code: 'data_source_id_taken',
      }),
    ],
    [
      'a data source renamed onto a taken provided_id',
      async () => ({
        request: {
          method: 'PATCH',
          path: `${ADMIN.dataSources}/${catalog.dsA.id}`,
          body: { provided_id: catalog.dsB.providedId },
        },
        status: 409,
        code: 'data_source_id_taken',
      }),
    ],
    [
      'a schema with a taken name',
      async () => {
        const [schema] = await ctx.t.runtime.store.listSchemas(await workspaceId(ctx.t));
        return {
          request: { method: 'POST', path: ADMIN.schemas, body: { name: schema!.name } },
          status: 409,
          code: 'schema_name_taken',
        };
      },
    ],
    [
      'a revocation of a token of another workspace',
      async () => {
        const { record } = await issueApiToken(ctx.t, { as: { workspace: 'other' } });
        return {
          request: { method: 'DELETE', path: `${ADMIN.apiTokens}/${record.id}` },
          status: 404,
          code: 'api_token_not_found',
        };
      },
    ],
    [
      'a rotation of a token rotated away',
      async () => {
        const group = await makeGroup(ctx.t);
        await ctx.t.runtime.services.userGroups.rotateUserGroupToken(await adminCaller(ctx.t), group.token);
        return {
          request: { method: 'POST', path: USER_PATH, as: write, body: { current_token: group.token } },
          status: 404,
          code: 'user_group_not_found',
        };
      },
    ],
  ];

  it.each(FAILURES)('%s: the error, and the audit trail and everything else unchanged', async (_label, prepare) => {
    const { request, status, code } = await prepare();
    const before = (await rawAuditTable(ctx.t)).count;
    const res = await expectUnchanged(ctx.t, () => adminCall(ctx.t, request));
    expectError(res, status, code);
    expect((await rawAuditTable(ctx.t)).count).toBe(before);
  });
});
