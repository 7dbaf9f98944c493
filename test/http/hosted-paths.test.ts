// The hosted product's per-operation paths and its Explo-Authorization header, so code
// written for that product works by changing only the base URL.
import { describe, expect, it } from 'vitest';
import { expectError, expectSuccess, TRANSPORTS, useClient } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { USER_PATH } from '../support/user-group-api.js';

for (const transport of TRANSPORTS) {
  describe(`the hosted product's paths over ${transport.name}`, () => {
    const fixture = useClient(transport);
    const explo = () => ({ 'explo-authorization': `Token ${apiToken(fixture.t, { scope: 'write' })}` });

    for (const slash of ['/', '']) {
      it(`get-or-create, update, refresh and delete under their own paths${slash ? ' with the trailing slash' : ''}, with Explo-Authorization`, async () => {
        const { client } = fixture;
        const id = uniqueId('hosted');
        const send = (method: string, path: string, body: unknown) =>
          client({ method, path: `/api/${path}${slash}`, body, headers: explo() });

        const created = expectSuccess(
          await send('POST', 'create_user_group', { user_group_id: id, name: 'Hosted', properties: { plan: 'pro' } }),
        );
        expect(created).toEqual({
          success: 1,
          new_user_group: true,
          user_group: expect.objectContaining({ provided_id: id, name: 'Hosted', properties: { plan: 'pro' } }),
        });
        const again = expectSuccess(await send('POST', 'create_user_group', { user_group_id: id, name: 'Hosted' }));
        expect(again).toMatchObject({ new_user_group: false, user_group: { token: created.user_group.token } });
        // The canonical path answers the same group.
        expect(
          expectSuccess(await client({ method: 'GET', path: USER_PATH, body: { user_group_id: id }, headers: explo() }))
            .user_group,
        ).toEqual(again.user_group);

        const updated = expectSuccess(await send('POST', 'update_user_group', { user_group_id: id, name: 'Renamed' }));
        expect(updated).toEqual({
          success: 1,
          user_group: expect.objectContaining({ provided_id: id, name: 'Renamed', api_environment_tag: 'Customer' }),
        });
        const refreshed = expectSuccess(
          await send('POST', 'refresh_user_group_token', { current_token: created.user_group.token }),
        );
        expect(refreshed.user_group.token).not.toBe(created.user_group.token);
        expect(
          expectSuccess(await send('DELETE', 'delete_user_group', { current_token: refreshed.user_group.token })),
        ).toEqual({ success: 1 });
        expectError(
          await send('POST', 'refresh_user_group_token', { current_token: refreshed.user_group.token }),
          404,
          'user_group_not_found',
        );
      });
    }

    it('refuses both headers at once, a bad token under either name, and other methods on the aliases', async () => {
      const { client } = fixture;
      const both = await client({
        method: 'POST',
        path: '/api/create_user_group/',
        token: apiToken(fixture.t),
        headers: explo(),
        body: { user_group_id: uniqueId('both') },
      });
      expectError(both, 401, 'unauthenticated');
      expect(both.headers['www-authenticate']).toBe('Token');
      expectError(
        await client({
          method: 'POST',
          path: '/api/create_user_group/',
          headers: { 'explo-authorization': 'Token ugs_live_nope' },
          body: { user_group_id: 'x' },
        }),
        401,
        'invalid_api_token',
      );
      const wrongMethod = await client({ method: 'GET', path: '/api/create_user_group/', headers: explo() });
      expectError(wrongMethod, 405, 'method_not_allowed');
      expect(wrongMethod.headers.allow).toBe('POST');
    });

    it('lists the aliases in /openapi.json as deprecated, and the canonical operations and the get-or-create of generated clients as not', async () => {
      const { paths } = (await fixture.client({ method: 'GET', path: '/openapi.json' })).body as {
        paths: Record<string, Record<string, { deprecated?: boolean }>>;
      };
      // The get-or-create with its fields in a JSON body: what generated clients call (docs/api.md).
      expect(paths['/api/create_user_group']?.post?.deprecated).toBeUndefined();
      expect(paths['/api/update_user_group']?.post?.deprecated).toBe(true);
      expect(paths['/api/refresh_user_group_token']?.post?.deprecated).toBe(true);
      expect(paths['/api/delete_user_group']?.delete?.deprecated).toBe(true);
      for (const method of ['get', 'put', 'post', 'delete'])
        expect(paths['/api/user']?.[method]?.deprecated).toBeUndefined();
    });
  });
}
