import { describe, expect, it } from 'vitest';
import { auditContext, createGroup, newApiToken, randomHex } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeUserGroupLookupContract(t: ContractContext): void {
  describe('user group lookups', () => {
    it('answers many lookups in one call, in the order asked, a group of another tenant or none as null', async () => {
      const { customer, testing } = t.fx;
      const first = await createGroup(t.store, customer, 'first');
      const second = await createGroup(t.store, customer, 'second');
      const elsewhere = await createGroup(t.store, testing, 'elsewhere');
      const byId = await t.store.lookUpUserGroups('providedId', [
        { tenant: customer, key: 'second' },
        { tenant: customer, key: 'missing' },
        { tenant: customer, key: 'first' },
        { tenant: customer, key: 'elsewhere' },
        { tenant: testing, key: 'elsewhere' },
        { tenant: customer, key: 'second' },
      ]);
      expect(byId).toEqual([
        { group: second },
        { group: null },
        { group: first },
        { group: null },
        { group: elsewhere },
        { group: second },
      ]);
      const byToken = await t.store.lookUpUserGroups('tokenHash', [
        { tenant: customer, key: first.tokenHash },
        { tenant: testing, key: first.tokenHash },
        { tenant: customer, key: randomHex() },
        { tenant: testing, key: elsewhere.tokenHash },
      ]);
      expect(byToken).toEqual([{ group: first }, { group: null }, { group: null }, { group: elsewhere }]);
      expect(await t.store.lookUpUserGroups('providedId', [])).toEqual([]);
    });

    it("reads each asking API token's state beside the group: live with its rate limit, or not live", async () => {
      const { customer, workspace } = t.fx;
      const group = await createGroup(t.store, customer, 'g');
      /** A token of the tenant, as a lookup names it: its id and its hash. */
      const token = async () => {
        const input = newApiToken(customer);
        return { id: (await t.store.insertApiToken(input, auditContext())).id, hash: input.tokenHash };
      };
      const limited = await token();
      const rateLimit = { perSecond: 5, burst: 10 };
      await t.store.updateApiTokenRateLimit(workspace.id, limited.id, rateLimit, auditContext());
      const plain = await token();
      const revoked = await token();
      await t.store.revokeApiToken(workspace.id, revoked.id, auditContext());
      const answers = await t.store.lookUpUserGroups('providedId', [
        { tenant: customer, key: 'g', apiToken: limited },
        { tenant: customer, key: 'g', apiToken: plain },
        { tenant: customer, key: 'missing', apiToken: revoked },
        { tenant: customer, key: 'g' },
      ]);
      expect(answers).toEqual([
        { group, apiToken: { live: true, rateLimit } },
        { group, apiToken: { live: true, rateLimit: null } },
        { group: null, apiToken: { live: false, rateLimit: null } },
        { group },
      ]);
    });
  });
}
