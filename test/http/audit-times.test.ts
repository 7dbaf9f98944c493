// A write reads the clock once: the group's created_at / updated_at is its audit event's time.
import { describe, expect, it } from 'vitest';
import { injectClient } from '../support/http-client.js';
import { expectSuccess } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

describe('audit times', () => {
  const holder = useTestApp();

  it('gives a create, an update and a rotation the same time as their audit events', async () => {
    const { t } = holder;
    const client = injectClient(t.app);
    const api = userGroupApi(client, apiToken(t));
    const id = uniqueId('timed');
    const created = expectSuccess(await api.getOrCreate({ user_group_id: id })).user_group;
    const updated = expectSuccess(await api.update({ user_group_id: id, name: 'Renamed' })).user_group;
    const rotated = expectSuccess(await api.rotate(created.token)).user_group;
    const events = expectSuccess(
      await client({ method: 'GET', path: `/api/admin/audit_events?team_id=${created.team_id}`, token: apiToken(t) }),
    ).audit_events;
    const at = (action: string) => events.find((event: { action: string }) => event.action === action).at;
    expect(at('user_group.created')).toBe(created.created_at);
    expect(at('user_group.updated')).toBe(updated.updated_at);
    expect(at('user_group.token_rotated')).toBe(rotated.updated_at);
  });
});
