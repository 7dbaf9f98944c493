// Three `ugs serve` processes on one PostgreSQL database, as N instances behind a load balancer:
// races between them are settled by the database, and no instance serves a stale credential.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';
import { expectError } from '../support/error-envelope.js';
import { uniqueId } from '../support/unique-id.js';
import { call } from '../support/http-client.js';
import { getOrCreate, verify } from '../support/user-group-api.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { waitFor } from '../support/wait-for.js';
import { CURRENT_KEY_HELD_MS } from '../../src/domain/signing-keys/signing-keys.service.js';

let db: TestDatabase;
let instances: ServeProcess[];
/** The first instance's first-start admin token (environment Customer). */
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  // Behind one load balancer, as instances are deployed: one public URL, so one issuer of embed tokens.
  const options = { env: { UGS_PUBLIC_URL: 'https://ugs.example.test' } };
  const first = await startServeProcess(db, options);
  admin = first.adminTokens().Customer;
  instances = [first, ...(await Promise.all([startServeProcess(db, options), startServeProcess(db, options)]))];
});

afterAll(async () => {
  await stopAllServeProcesses();
  await db?.drop();
});

/** The same call on every instance, one after the other; the responses in instance order. */
async function onEach(
  request: (instance: ServeProcess) => Promise<ApiResponse>,
  on = instances,
): Promise<ApiResponse[]> {
  const responses: ApiResponse[] = [];
  for (const instance of on) responses.push(await request(instance));
  return responses;
}

/** Checks `userGroupToken` verifies as `group` on the given instances (by default all three). */
async function expectVerifies(userGroupToken: string, group: UserGroup, on = instances): Promise<void> {
  for (const response of await onEach((instance) => verify(instance, admin, userGroupToken), on)) {
    expect(response.status, response.raw).toBe(200);
    expect(response.body.user_group).toMatchObject({
      team_id: group.team_id,
      provided_id: group.provided_id,
      token: userGroupToken,
    });
  }
}

describe('three ugs serve processes on one PostgreSQL database', () => {
  it('96 concurrent get-or-create calls for one new id, 32 per instance, create exactly one group with one token', async () => {
    const userGroupId = uniqueId('race');
    const responses = await Promise.all(
      Array.from({ length: 96 }, (_, index) =>
        getOrCreate(instances[index % 3]!, admin, { user_group_id: userGroupId, name: 'Race' }),
      ),
    );

    for (const response of responses) expect(response.status, response.raw).toBe(200);
    expect(responses.filter((response) => response.body.new_user_group === true)).toHaveLength(1);
    expect(new Set(responses.map((response) => response.body.user_group.team_id)).size).toBe(1);
    expect(new Set(responses.map((response) => response.body.user_group.token)).size).toBe(1);
    const teamId = responses[0]!.body.user_group.team_id as number;

    // The database holds one group and recorded one creation: through the API of another instance…
    const listed = await call(instances[2]!, {
      method: 'GET',
      path: `/api/admin/user_groups?q=${userGroupId}`,
      token: admin,
    });
    expect(listed.status, listed.raw).toBe(200);
    expect(listed.body.user_groups).toEqual([expect.objectContaining({ team_id: teamId, provided_id: userGroupId })]);
    const audited = await call(instances[1]!, {
      method: 'GET',
      path: `/api/admin/audit_events?action=user_group.created&team_id=${teamId}`,
      token: admin,
    });
    expect(audited.status, audited.raw).toBe(200);
    expect(audited.body.audit_events).toHaveLength(1);
    // …and in the tables themselves.
    const rows = await withPostgresClient(
      (client) => client.query('SELECT team_id FROM user_groups WHERE provided_id = $1', [userGroupId]),
      db.url,
    );
    expect(rows.rows.map((row: { team_id: string | number }) => Number(row.team_id))).toEqual([teamId]);
  });

  it('a token rotated through instance 1 is refused by instances 2 and 3 on their next request; the new one verifies on all three', async () => {
    const group = await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId('rotated') });
    // Every instance has just accepted the old token: a cache, if any, holds it now.
    await expectVerifies(group.token, group);

    const rotated = await call(instances[0]!, {
      method: 'POST',
      path: '/api/user',
      token: admin,
      body: { current_token: group.token },
    });
    expect(rotated.status, rotated.raw).toBe(200);
    const newToken = rotated.body.user_group.token as string;
    expect(newToken).not.toBe(group.token);
    expect(rotated.body.user_group.team_id).toBe(group.team_id);

    for (const response of await onEach(
      (instance) => verify(instance, admin, group.token),
      [instances[1]!, instances[2]!, instances[0]!],
    )) {
      expectError(response, 404, 'user_group_not_found');
    }
    await expectVerifies(newToken, group);
  });

  it('concurrent rotations of one token through all three instances: exactly one wins, the others find no such token', async () => {
    const group = await makeGroup({ target: instances[1]!, token: admin }, { id: uniqueId('rotation_race') });
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        call(instances[index % 3]!, {
          method: 'POST',
          path: '/api/user',
          token: admin,
          body: { current_token: group.token },
        }),
      ),
    );

    const winners = responses.filter((response) => response.status === 200);
    expect(winners, responses.map((response) => response.raw).join('\n')).toHaveLength(1);
    for (const response of responses.filter((candidate) => candidate.status !== 200))
      expectError(response, 404, 'user_group_not_found');
    const newToken = winners[0]!.body.user_group.token as string;
    await expectVerifies(newToken, group);
    for (const response of await onEach((instance) => verify(instance, admin, group.token)))
      expectError(response, 404, 'user_group_not_found');
  });

  it('an API token created and revoked through instance 1 is refused with 401 invalid_api_token by every instance on the next request', async () => {
    const group = await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId('api_token_target') });
    const created = await call(instances[0]!, {
      method: 'POST',
      path: '/api/admin/api_tokens',
      token: admin,
      body: { name: 'short-lived', scope: 'read' },
    });
    expect(created.status, created.raw).toBe(200);
    const { id, token } = created.body.api_token as { id: number; token: string };
    // Every instance has just accepted the API token.
    for (const response of await onEach((instance) => verify(instance, token, group.token)))
      expect(response.status, response.raw).toBe(200);

    const revoked = await call(instances[0]!, { method: 'DELETE', path: `/api/admin/api_tokens/${id}`, token: admin });
    expect(revoked.status, revoked.raw).toBe(200);

    for (const response of await onEach(
      (instance) => verify(instance, token, group.token),
      [instances[1]!, instances[2]!, instances[0]!],
    )) {
      expectError(response, 401, 'invalid_api_token');
      expect(response.headers['www-authenticate']).toBe('Token');
    }
  });

  it('a user group deleted by its token through instance 2 is refused at once by instances 1 and 3', async () => {
    const group = await makeGroup({ target: instances[2]!, token: admin }, { id: uniqueId('deleted') });
    await expectVerifies(group.token, group);

    const deleted = await call(instances[1]!, {
      method: 'DELETE',
      path: '/api/user',
      token: admin,
      body: { current_token: group.token },
    });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body).toEqual({ success: 1 });

    for (const response of await onEach(
      (instance) => verify(instance, admin, group.token),
      [instances[0]!, instances[2]!, instances[1]!],
    )) {
      expectError(response, 404, 'user_group_not_found');
    }
  });

  /** An embed token minted through `instance` for `group`; its kid. */
  async function mintEmbedToken(instance: ServeProcess, group: UserGroup): Promise<{ token: string; kid: string }> {
    const minted = await call(instance, {
      method: 'POST',
      path: '/api/user/embed_token',
      token: admin,
      body: { user_group_id: group.provided_id },
    });
    expect(minted.status, minted.raw).toBe(200);
    const token = minted.body.embed_token as string;
    return {
      token,
      kid: (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid,
    };
  }

  it('embed tokens: a group token rotated, or the group deleted, through one instance voids the embed tokens on every instance at once', async () => {
    const group = await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId('embedded') });
    const before = await mintEmbedToken(instances[1]!, group);
    for (const response of await onEach((instance) => verify(instance, admin, before.token)))
      expect(response.status, response.raw).toBe(200);

    const rotated = await call(instances[2]!, {
      method: 'POST',
      path: '/api/user',
      token: admin,
      body: { current_token: group.token },
    });
    expect(rotated.status, rotated.raw).toBe(200);
    for (const response of await onEach(
      (instance) => verify(instance, admin, before.token),
      [instances[0]!, instances[1]!, instances[2]!],
    )) {
      expectError(response, 404, 'user_group_not_found');
    }
    const after = await mintEmbedToken(instances[0]!, group);
    for (const response of await onEach((instance) => verify(instance, admin, after.token)))
      expect(response.status, response.raw).toBe(200);

    const deleted = await call(instances[1]!, {
      method: 'DELETE',
      path: '/api/user',
      token: admin,
      body: { user_group_id: group.provided_id },
    });
    expect(deleted.status, deleted.raw).toBe(200);
    for (const response of await onEach(
      (instance) => verify(instance, admin, after.token),
      [instances[2]!, instances[0]!, instances[1]!],
    )) {
      expectError(response, 404, 'user_group_not_found');
    }
  });

  it('embed tokens: every instance signs with one key; after a rotation through one, it signs with the new key at once, the others within the held bound, and all publish both', async () => {
    const group = await makeGroup({ target: instances[0]!, token: admin }, { id: uniqueId('signed') });
    const kids = new Set<string>();
    for (const instance of instances) kids.add((await mintEmbedToken(instance, group)).kid);
    expect(kids.size).toBe(1);
    const [oldKid] = [...kids];
    const old = await mintEmbedToken(instances[2]!, group);

    const rotation = await call(instances[1]!, {
      method: 'POST',
      path: '/api/admin/signing_keys/rotate',
      token: admin,
    });
    expect(rotation.status, rotation.raw).toBe(200);
    const newKid = rotation.body.current.kid as string;
    expect((await mintEmbedToken(instances[1]!, group)).kid).toBe(newKid);
    // The others hold the key they read for up to CURRENT_KEY_HELD_MS: until then either key may sign there…
    const others = [instances[0]!, instances[2]!];
    const late: string[] = [];
    for (const instance of others) {
      const minted = await mintEmbedToken(instance, group);
      expect([oldKid, newKid]).toContain(minted.kid);
      late.push(minted.token);
    }
    // …and then the new one (the wait allows for the polling and a loaded machine's requests).
    for (const instance of others) {
      await waitFor(`an instance signing with ${newKid}`, CURRENT_KEY_HELD_MS + 2_000, async () =>
        (await mintEmbedToken(instance, group)).kid === newKid ? true : undefined,
      );
    }
    for (const response of await onEach((instance) =>
      call(instance, { method: 'GET', path: '/w/default/.well-known/jwks.json' }),
    )) {
      expect((response.body.keys as Array<{ kid: string }>).map((key) => key.kid)).toEqual([newKid, oldKid]);
    }
    for (const response of await onEach((instance) =>
      call(instance, { method: 'GET', path: '/w/default/.well-known/openid-configuration' }),
    )) {
      expect(response.body.issuer).toBe('https://ugs.example.test/w/default');
    }
    // A token of the old key, signed before the rotation or by another instance after it, is still
    // good everywhere until it expires.
    for (const token of [old.token, ...late])
      for (const response of await onEach((instance) => verify(instance, admin, token)))
        expect(response.status, response.raw).toBe(200);
  });

  it('only the first instance made the first-start tokens, and all three stop cleanly on SIGTERM', async () => {
    const [first, second, third] = instances as [ServeProcess, ServeProcess, ServeProcess];
    expect(await Promise.all(instances.map((instance) => instance.stop()))).toEqual([0, 0, 0]);
    // Stopped, so their output is complete.
    expect(first.adminTokens().Customer).toBe(admin);
    for (const later of [second, third]) {
      expect(later.stdout()).not.toMatch(/ugs_(live|test)_/);
      expect(() => later.adminTokens()).toThrow(/no first-start tokens file/);
    }
  });
});
