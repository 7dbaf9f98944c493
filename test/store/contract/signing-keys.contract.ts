import { describe, expect, it } from 'vitest';
import { MAX_PUBLISHED_KEYS } from '../../../src/wire/contract.constants.js';
import { auditContext, auditWrittenBy, newSigningKey, T0, T1 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** `minutes` after T1. */
const at = (minutes: number) => new Date(Date.parse(T1) + minutes * 60_000).toISOString();

export function describeSigningKeyContract(t: ContractContext): void {
  describe('signing keys', () => {
    it("keeps each environment's keys apart: a current key each, found by kid only under its own issuer", async () => {
      const { customer, testing } = t.fx;
      const customerKey = await t.store.insertFirstSigningKey(newSigningKey(customer, T1), auditContext());
      const testingKey = await t.store.insertFirstSigningKey(newSigningKey(testing, T1), auditContext());
      expect(customerKey).toMatchObject({ environment: 'Customer', retiredAt: null });
      expect(testingKey).toMatchObject({ environment: 'Testing', retiredAt: null });
      // A second first key of an issuer writes nothing and answers the one there is.
      expect(await t.store.insertFirstSigningKey(newSigningKey(testing, T1), auditContext())).toEqual(testingKey);

      expect(await t.store.findCurrentSigningKey(customer)).toEqual(customerKey);
      expect(await t.store.findCurrentSigningKey(testing)).toEqual(testingKey);
      expect(await t.store.findSigningKey(testing, testingKey.kid)).toEqual(testingKey);
      expect(await t.store.findSigningKey(customer, testingKey.kid)).toBeNull();
      expect(await t.store.findSigningKey(testing, customerKey.kid)).toBeNull();
      expect(await t.store.listSigningKeys(customer, T0)).toEqual([customerKey]);

      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        const rotation = await t.store.rotateSigningKey(newSigningKey(testing, at(1)), auditContext({ at: at(1) }), {
          publishedSince: T0,
          force: false,
        });
        expect(rotation).toMatchObject({
          status: 'rotated',
          retired: { ...testingKey, retiredAt: at(1) },
          dropped: [],
        });
      });
      expect(events).toEqual([expect.objectContaining({ action: 'signing_key.rotated', environment: 'Testing' })]);
      expect(await t.store.findCurrentSigningKey(customer)).toEqual(customerKey);
    });

    it(`publishes at most ${MAX_PUBLISHED_KEYS} keys an issuer: beyond, refused and nothing written, unless forced (the oldest dropped)`, async () => {
      const { customer, testing } = t.fx;
      await t.store.insertFirstSigningKey(newSigningKey(customer, at(0)), auditContext());
      // A key retired before publishedSince is no longer published and does not count.
      const bound = (minutes: number, force = false) => ({ publishedSince: at(minutes), force });
      for (let minute = 1; minute < MAX_PUBLISHED_KEYS; minute += 1) {
        expect(
          await t.store.rotateSigningKey(newSigningKey(customer, at(minute)), auditContext(), bound(0)),
        ).toMatchObject({
          status: 'rotated',
        });
      }
      const published = await t.store.listSigningKeys(customer, at(0));
      expect(published).toHaveLength(MAX_PUBLISHED_KEYS);

      const refused = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(await t.store.rotateSigningKey(newSigningKey(customer, at(40)), auditContext(), bound(0))).toEqual({
          status: 'limit_reached',
          published: MAX_PUBLISHED_KEYS,
        });
      });
      expect(refused).toEqual([]);
      expect(await t.store.listSigningKeys(customer, at(0))).toEqual(published);
      // The other environment's issuer is not bound by Customer's keys.
      await t.store.insertFirstSigningKey(newSigningKey(testing, T1), auditContext());
      expect(await t.store.rotateSigningKey(newSigningKey(testing, at(40)), auditContext(), bound(0))).toMatchObject({
        status: 'rotated',
      });
      // Once the oldest retired key is past publishedSince, a rotation fits again.
      expect(await t.store.rotateSigningKey(newSigningKey(customer, at(41)), auditContext(), bound(1))).toMatchObject({
        status: 'rotated',
        dropped: [],
      });

      const oldest = (await t.store.listSigningKeys(customer, at(1))).at(-1)!;
      const forced = await t.store.rotateSigningKey(newSigningKey(customer, at(42)), auditContext(), bound(1, true));
      expect(forced).toMatchObject({ status: 'rotated', dropped: [oldest] });
      const after = await t.store.listSigningKeys(customer, at(1));
      expect(after).toHaveLength(MAX_PUBLISHED_KEYS);
      expect(await t.store.findSigningKey(customer, oldest.kid)).toBeNull();
    });

    it('lets concurrent rotations of one issuer pass the bound together never', async () => {
      const { customer } = t.fx;
      await t.store.insertFirstSigningKey(newSigningKey(customer, at(0)), auditContext());
      for (let minute = 1; minute < MAX_PUBLISHED_KEYS - 2; minute += 1) {
        await t.store.rotateSigningKey(newSigningKey(customer, at(minute)), auditContext(), {
          publishedSince: T0,
          force: false,
        });
      }
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, index) =>
          t.store.rotateSigningKey(newSigningKey(customer, at(40 + index)), auditContext(), {
            publishedSince: T0,
            force: false,
          }),
        ),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'rotated')).toHaveLength(2);
      expect(await t.store.listSigningKeys(customer, T0)).toHaveLength(MAX_PUBLISHED_KEYS);
      expect((await t.store.listSigningKeys(customer, T0)).filter((key) => key.retiredAt === null)).toHaveLength(1);
    });

    it('records when the service began signing low-S: when the database was migrated to it', async () => {
      const since = await t.store.lowSignaturesSince();
      expect(Math.abs(Date.parse(since) - Date.now())).toBeLessThan(120_000);
      expect(await t.store.lowSignaturesSince()).toBe(since);
    });
  });
}
