// A program written against a client generated from /openapi.json alone: the types come from
// openapi-typescript (./openapi-types.ts, generated at test time next to this file's copy) and the
// calls go through openapi-fetch. generated-client.test.ts type-checks it (strict) and runs it
// against a live server; it prints what it got back as one JSON line.
//
// No cast and no escape from the types: the generated types alone must be enough to write it.
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-types.js';

type UserGroup = components['schemas']['UserGroup'];

const baseUrl = process.env.UGS_URL;
const token = process.env.UGS_TOKEN;
if (!baseUrl || !token) throw new Error('UGS_URL and UGS_TOKEN are required');

const client = createClient<paths>({ baseUrl, headers: { Authorization: `Token ${token}` } });

/** The body of a success; the error envelope, thrown, otherwise. */
function succeeded<T>(result: { data?: T; error?: components['schemas']['Error'] }): T {
  if (result.data === undefined) throw new Error(`refused: ${JSON.stringify(result.error)}`);
  return result.data;
}

// Get-or-create in its query form: JSON-valued fields travel as JSON text, booleans as booleans.
const created = succeeded(
  await client.GET('/api/user', {
    params: {
      query: {
        user_group_id: 'generated-client-group',
        name: 'Generated client',
        is_demo_group: true,
        tags: JSON.stringify(['generated']),
        properties: JSON.stringify({ plan: 'pro' }),
      },
    },
  }),
);
const group: UserGroup = created.user_group;

const updated = succeeded(
  await client.PUT('/api/user', { body: { user_group_id: group.provided_id, name: 'Generated client, renamed' } }),
);

const rotated = succeeded(await client.POST('/api/user', { body: { current_token: group.token } }));

const verified = succeeded(await client.POST('/api/user/verify', { body: { token: rotated.user_group.token } }));
const staleToken = await client.POST('/api/user/verify', { body: { token: group.token } });

const listed = succeeded(
  await client.GET('/api/admin/user_groups', { params: { query: { is_demo_group: true, limit: 10 } } }),
);
const audited = succeeded(
  await client.GET('/api/admin/audit_events', { params: { query: { team_id: group.team_id, limit: 1000 } } }),
);

const deleted = succeeded(await client.DELETE('/api/user', { body: { user_group_id: group.provided_id } }));
const gone = await client.PUT('/api/user', { body: { user_group_id: group.provided_id, name: 'Again' } });

process.stdout.write(
  `${JSON.stringify({
    created: { new_user_group: created.new_user_group, is_demo_group: group.is_demo_group, tags: group.tags },
    properties: group.properties,
    updatedName: updated.user_group.name,
    rotated: rotated.user_group.token !== group.token,
    verifiedTeamId: verified.user_group.team_id,
    staleTokenStatus: staleToken.response.status,
    staleTokenCode: staleToken.error?.error.code,
    listedProvidedIds: listed.user_groups.map((item) => item.provided_id),
    auditActions: audited.audit_events.map((event) => event.action),
    deleted: deleted.success,
    goneCode: gone.error?.error.code,
    teamId: group.team_id,
  })}\n`,
);
