// The hosted product's documented example calls of its End User Group API
// (docs.explo.co, api-reference/end-user-group-api), run by curl through a shell exactly as
// documented except for the host and the tokens, against a real server on a socket.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { USER_GROUP_TOKEN } from './helpers.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { useTestApp } from '../support/test-app.js';

const run = promisify(execFile);

/* The documented commands, whitespace (tabs in the delete example) included. */
const GET_OR_CREATE = `curl --location --request POST 'https://api.explo.co/api/create_user_group/' \\
--header 'Content-Type: application/json' \\
--header 'Explo-Authorization: Token <token>' \\
--data-raw '{
    "user_group_id": "example_1",
    "name": "Example 1",
    "mapping": {"40": "213", "134": "386"},
    "properties": {"filterValue": "value"}
}'`;

// The documented update example is the get-or-create one, word for word, under its own path.
const UPDATE = GET_OR_CREATE.replace('/api/create_user_group/', '/api/update_user_group/');

const REFRESH = `curl --location --request POST 'https://api.explo.co/api/refresh_user_group_token/' \\
--header 'Content-Type: application/json' \\
--header 'Explo-Authorization: Token <token>' \\
--data-raw '{
    "current_token": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
}'`;

const DELETE = `curl --location --request DELETE 'https://api.explo.co/api/delete_user_group/' \\
--header 'Content-Type: application/json' \\
--header 'Explo-Authorization: Token <token>' \\
--data-raw '{
\t\t"current_token": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
}'`;

const DOCUMENTED_GROUP_TOKEN = 'a'.repeat(64);

describe("the hosted product's documented example calls", () => {
  const holder = useTestApp();
  let baseUrl = '';

  /** Runs a documented command through bash with only the host and the tokens replaced; returns the parsed answer. */
  const runDocumented = async (command: string, groupToken?: string) => {
    let replaced = command
      .replace('https://api.explo.co', baseUrl)
      .replace('<token>', apiToken(holder.t, { scope: 'write' }));
    if (groupToken !== undefined) replaced = replaced.replace(DOCUMENTED_GROUP_TOKEN, groupToken);
    const { stdout } = await run('bash', ['-c', `${replaced} --silent --show-error --write-out '\\n%{http_code}'`]);
    const [body, status] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
    return { status: Number(status), body: JSON.parse(body) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const { t } = holder;
    baseUrl = (await t.listen()).replace(/\/$/, '');
    // The example maps schema 40 to data source "213" and schema 134 to "386": the catalogue is
    // recreated with those ids, as an admin moving from the hosted product does (docs/api.md#schema-and-data-source-ids).
    const caller = await adminCaller(t);
    for (const id of [40, 134])
      expect((await t.runtime.services.schemas.createSchema(caller, { name: `schema ${id}`, id })).id).toBe(id);
    await t.runtime.services.dataSources.createDataSource(caller, {
      providedId: '213',
      name: 'Documented 213',
      schemaId: 40,
    });
    await t.runtime.services.dataSources.createDataSource(caller, {
      providedId: '386',
      name: 'Documented 386',
      schemaId: 134,
    });
  });

  it('get-or-create, update, refresh token and delete succeed with the documented response fields', async () => {
    const created = await runDocumented(GET_OR_CREATE);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: 1,
      new_user_group: true,
      user_group: {
        team_id: expect.any(Number),
        token: expect.stringMatching(USER_GROUP_TOKEN),
        name: 'Example 1',
        provided_id: 'example_1',
        is_demo_group: false,
      },
    });
    const createdGroup = created.body.user_group as Record<string, unknown>;
    expect(createdGroup).toMatchObject({
      properties: { filterValue: 'value' },
      mapping: { 40: expect.any(String), 134: expect.any(String) },
    });

    // The same call again is a get: nothing new, the same token.
    const again = await runDocumented(GET_OR_CREATE);
    expect(again.body).toMatchObject({ success: 1, new_user_group: false, user_group: { token: createdGroup.token } });

    const updated = await runDocumented(UPDATE);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      success: 1,
      user_group: {
        team_id: createdGroup.team_id,
        token: createdGroup.token,
        name: 'Example 1',
        provided_id: 'example_1',
        is_demo_group: false,
      },
    });

    const refreshed = await runDocumented(REFRESH, String(createdGroup.token));
    expect(refreshed.status).toBe(200);
    const refreshedGroup = refreshed.body.user_group as Record<string, unknown>;
    expect(refreshed.body).toMatchObject({
      success: 1,
      user_group: { team_id: createdGroup.team_id, name: 'Example 1', provided_id: 'example_1' },
    });
    expect(refreshedGroup.token).toMatch(USER_GROUP_TOKEN);
    expect(refreshedGroup.token).not.toBe(createdGroup.token);

    const deleted = await runDocumented(DELETE, String(refreshedGroup.token));
    expect(deleted).toEqual({ status: 200, body: { success: 1 } });
    const gone = await runDocumented(DELETE, String(refreshedGroup.token));
    expect(gone).toMatchObject({ status: 404, body: { success: 0, error: { code: 'user_group_not_found' } } });
  });
});
