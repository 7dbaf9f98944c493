// A tag (docs/api.md#hierarchy-demo-groups-and-tags) is one rule wherever one is taken: a group's tags on
// create and update, a sync's prune, the admin list's filter, an import line. Each refuses a C0 or C1
// control character (U+0080–U+009F included) and DEL alike: 400 invalid_field naming the field, nothing changed.
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, adminCall } from './admin-helpers.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { importCall } from './import-helpers.js';
import { syncCall } from './sync-helpers.js';
import { apiToken } from '../support/callers.js';
import { injectClient } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

/** Tags a control character spoils: C1 at both ends of its range and NEL inside it, C0, DEL. */
const NOT_TAGS: Array<[string, string]> = [
  ['a C1 control (U+0080)', 'a\u0080b'],
  ['NEL (U+0085)', 'a\u0085b'],
  ['a C1 control (U+009F)', 'a\u009Fb'],
  ['a C0 control (U+0001)', 'a\u0001b'],
  ['a line feed', 'a\nb'],
  ['DEL', 'a\u007Fb'],
];

describe('a tag is one rule everywhere one is taken', () => {
  const fixture = useTestApp();
  const api = () => userGroupApi(injectClient(fixture.t.app), apiToken(fixture.t, { scope: 'write' }));
  const tag = uniqueId('tag');
  let group: string;

  beforeAll(async () => {
    group = uniqueId('tagged');
    expectSuccess(await api().getOrCreate({ user_group_id: group, tags: [tag] }));
  });

  it('takes the characters either side of the C1 range: U+007E and U+00A0', async () => {
    const tags = ['a\u007Eb', 'a\u00A0b'];
    expect(expectSuccess(await api().getOrCreate({ user_group_id: uniqueId('edges'), tags })).user_group.tags).toEqual(
      tags,
    );
  });

  for (const [label, bad] of NOT_TAGS) {
    describe(`with ${label}`, () => {
      it('is refused in a group created with it (400 invalid_field "tags"), creating nothing', async () => {
        const response = await expectUnchanged(fixture.t, () =>
          api().getOrCreate({ user_group_id: uniqueId('refused'), tags: ['fine', bad] }),
        );
        expectError(response, 400, 'invalid_field', 'tags');
      });

      it('is refused in an update (400 invalid_field "tags"), the group keeping its tags', async () => {
        const response = await expectUnchanged(fixture.t, () => api().update({ user_group_id: group, tags: [bad] }));
        expectError(response, 400, 'invalid_field', 'tags');
      });

      it('is refused as a sync prune (400 invalid_field "prune"), deleting and creating nothing', async () => {
        const response = await expectUnchanged(fixture.t, () =>
          syncCall(fixture.t, [{ user_group_id: uniqueId('synced') }], { prune: bad }),
        );
        expectError(response, 400, 'invalid_field', 'prune');
      });

      it('is refused as the admin list filter (400 invalid_field "tag")', async () => {
        const response = await expectUnchanged(fixture.t, () =>
          adminCall(fixture.t, { path: ADMIN.userGroups, query: { tag: bad } }),
        );
        expectError(response, 400, 'invalid_field', 'tag');
      });

      it('is refused on an import line, naming the line and tags, and that line writes nothing', async () => {
        const refused = uniqueId('imported');
        const response = await expectUnchanged(fixture.t, () =>
          importCall(fixture.t, [{ provided_id: refused, tags: [bad] }]),
        );
        const summary = expectSuccess(response).import;
        expect(summary).toMatchObject({ created: 0, updated: 0, unchanged: 0 });
        expect(summary.rejected).toEqual([{ line: 1, reason: expect.stringMatching(/tags/) }]);
      });
    });
  }
});
