import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/domain/tenancy.js';
import { injectClient } from '../support/http-client.js';
import { ADMIN, adminCall, adminReader, ids, PAGING_QUERY_ERRORS } from './admin-helpers.js';
import { collectPages, listAll, type Query } from '../support/paged-list.js';
import { expectError, expectSuccess, ISO_TIMESTAMP, seedCatalog } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken, type As } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

interface AuditEvent {
  id: number;
  at: string;
  environment: Environment | null;
  action: string;
  team_id: number | null;
}

/** What a filter keeps, written from docs/api.md#the-admin-api and the route's documentation (since inclusive, until exclusive). */
interface Filter {
  environment?: Environment;
  team_id?: number;
  action?: string;
  since?: string;
  until?: string;
}

function matches(event: AuditEvent, filter: Filter): boolean {
  return (
    (filter.environment === undefined || event.environment === filter.environment) &&
    (filter.team_id === undefined || event.team_id === filter.team_id) &&
    (filter.action === undefined || event.action === filter.action) &&
    (filter.since === undefined || Date.parse(event.at) >= Date.parse(filter.since)) &&
    (filter.until === undefined || Date.parse(event.at) < Date.parse(filter.until))
  );
}

/** The same instant as `at`, written with a +02:00 offset. */
function withOffset(at: string): string {
  return new Date(Date.parse(at) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
}

const events = ADMIN.auditEvents;

describe('GET /api/admin/audit_events', () => {
  // An app of its own: its trail holds the test app's setup and the history made here.
  const ctx = useTestApp();
  const list = (query: Query = {}, as?: As): Promise<AuditEvent[]> =>
    listAll(adminReader(ctx.t, as), events, 'audit_events', query);

  /** team_ids of a Customer group (created, updated, rotated) and a Testing group (the same, then deleted). */
  const history: Record<'customer' | 'testing', number> = { customer: 0, testing: 0 };
  let all: AuditEvent[] = [];

  beforeAll(async () => {
    const client = injectClient(ctx.t.app);
    const catalog = await seedCatalog(ctx.t);
    const apis = {
      customer: userGroupApi(client, apiToken(ctx.t, { environment: 'Customer', scope: 'write' })),
      testing: userGroupApi(client, apiToken(ctx.t, { environment: 'Testing', scope: 'write' })),
    };
    for (const key of ['customer', 'testing'] as const) {
      const api = apis[key];
      const id = uniqueId(key);
      const mapping = key === 'customer' ? { [catalog.schemaA]: catalog.dsA.id } : {};
      const created = expectSuccess(await api.getOrCreate({ user_group_id: id, mapping })).user_group;
      history[key] = created.team_id;
      expectSuccess(await api.update({ user_group_id: id, name: 'Renamed' }));
      expectSuccess(await api.rotate(created.token));
      if (key === 'testing') expectSuccess(await api.remove({ user_group_id: id }));
      // A pause, so that the events before and after have different times.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    all = await list();
  });

  it('lists the whole workspace trail newest first, each event once, both environments and none', () => {
    expect(ids(all)).toEqual([...ids(all)].sort((a, b) => b - a));
    expect(new Set(ids(all)).size).toBe(all.length);
    expect(new Set(all.map((event) => event.environment))).toEqual(new Set(['Customer', 'Testing', null]));
    for (const event of all) expect(event.at).toMatch(ISO_TIMESTAMP);
  });

  it("shows a group's history under its team_id, newest first", async () => {
    const actions = async (teamId: number) => (await list({ team_id: teamId })).map((event) => event.action);
    const lived = ['user_group.token_rotated', 'user_group.updated', 'user_group.created'];
    expect(await actions(history.customer)).toEqual(lived);
    expect(await actions(history.testing)).toEqual(['user_group.deleted', ...lived]);
  });

  describe('filters', () => {
    const at = (index: number) => all[index]!.at;
    /** An event in the middle of the trail whose neighbours have other times, so both bounds cut somewhere. */
    const middle = () =>
      all.findIndex((event, index) => index > 0 && index < all.length - 1 && event.team_id === history.testing);

    const FILTERS: Array<[string, () => Filter]> = [
      ['environment Customer', () => ({ environment: 'Customer' })],
      ['environment Testing', () => ({ environment: 'Testing' })],
      ['team_id', () => ({ team_id: history.testing })],
      ['action', () => ({ action: 'user_group.updated' })],
      ['action and environment', () => ({ action: 'api_token.created', environment: 'Testing' })],
      ['team_id and action', () => ({ team_id: history.customer, action: 'user_group.token_rotated' })],
      ['since an event’s time', () => ({ since: at(middle()) })],
      ['until an event’s time', () => ({ until: at(middle()) })],
      ['since and until', () => ({ since: at(all.length - 2), until: at(middle()) })],
    ];

    it.each(FILTERS)('%s keeps exactly the matching events, newest first', async (_label, filter) => {
      const query = filter();
      const expected = all.filter((event) => matches(event, query));
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(all.length);
      expect(await list({ ...query })).toEqual(expected);
    });

    it('since is inclusive and until exclusive, at the exact time of an event', async () => {
      const event = all[middle()]!;
      expect(ids(await list({ since: event.at }))).toContain(event.id);
      expect(ids(await list({ until: event.at }))).not.toContain(event.id);
      expect(ids(await list({ since: event.at, until: event.at }))).toEqual([]);
    });

    it('reads a time with an offset as the same instant', async () => {
      const { at: time } = all[middle()]!;
      expect(await list({ since: withOffset(time) })).toEqual(await list({ since: time }));
      expect(await list({ until: withOffset(time) })).toEqual(await list({ until: time }));
    });

    it('an action no event has, or a team_id of no group, finds nothing', async () => {
      expect(await list({ action: 'user_group.exploded' })).toEqual([]);
      expect(await list({ team_id: 999_999_999 })).toEqual([]);
    });
  });

  it.each<[string, Query]>([
    ['everything', {}],
    ['environment Customer', { environment: 'Customer' }],
  ])('pages of 2 over %s cover each event once, newest first, the last next_cursor null', async (_label, query) => {
    const { pages, items, cursors } = await collectPages(adminReader(ctx.t), events, 'audit_events', {
      ...query,
      limit: 2,
    });
    expect(items).toEqual(await list(query));
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    expect(pages.length).toBeGreaterThan(2);
    expect(cursors.at(-1)).toBeNull();
  });

  it.each<[string, Query, string, string]>([
    ...PAGING_QUERY_ERRORS,
    ['since that is no time', { since: 'yesterday' }, 'invalid_field', 'since'],
    ['since that is a date alone', { since: '2026-01-01' }, 'invalid_field', 'since'],
    ['since in month 13', { since: '2026-13-01T00:00:00Z' }, 'invalid_field', 'since'],
    ['since on February 30', { since: '2026-02-30T00:00:00Z' }, 'invalid_field', 'since'],
    ['since at hour 25', { since: '2026-01-01T25:00:00Z' }, 'invalid_field', 'since'],
    ['an empty since', { since: '' }, 'invalid_field', 'since'],
    ['until that is no time', { until: 'tomorrow' }, 'invalid_field', 'until'],
    ['until as epoch milliseconds', { until: '1767225600000' }, 'invalid_field', 'until'],
    ['a word as team_id', { team_id: 'abc' }, 'invalid_field', 'team_id'],
    ['team_id 0', { team_id: 0 }, 'invalid_field', 'team_id'],
    ['an action of 65 characters', { action: 'a'.repeat(65) }, 'invalid_field', 'action'],
  ])('refuses %s (%j): 400 %s naming %s', async (_label, query, code, field) => {
    expectError(await adminCall(ctx.t, { path: events, query }), 400, code, field);
  });

  it("another workspace's admin sees none of this workspace's events", async () => {
    const home = ids(all);
    for (const environment of ['Customer', 'Testing'] as const) {
      const other: As = { workspace: 'other', environment };
      const seen = await list({}, other);
      expect(seen.length).toBeGreaterThan(0);
      expect(ids(seen).filter((id) => home.includes(id))).toEqual([]);
      for (const teamId of Object.values(history)) expect(await list({ team_id: teamId }, other)).toEqual([]);
    }
  });
});
