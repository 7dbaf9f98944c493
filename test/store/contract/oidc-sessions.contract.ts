import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../src/domain/audit/audit-entry.js';
import type { NewPersonSession } from '../../../src/domain/console-sessions/oidc-session.records.js';
import { auditContext, auditWrittenBy, randomHex, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Console sign-in through an identity provider: its flows, the sessions of people, people as audit actors. */
export function describeOidcSessionContract(t: ContractContext): void {
  describe('sign-in flows and people', () => {
    const ISSUER = 'https://idp.example.com/realms/acme';
    const person = { issuer: ISSUER, subject: 'f81d4fae-7dec', email: 'ada@example.com' };
    const personContext = (at = T0) => auditContext({ at, actor: { type: 'person', ...person } });
    const flow = (expiresAt = T1) => ({
      stateHash: randomHex(),
      browserHash: randomHex(),
      returnTo: '/console/groups',
      createdAt: T0,
      expiresAt,
    });
    const newSession = (overrides: Partial<NewPersonSession> = {}): NewPersonSession => ({
      idHash: randomHex(),
      person,
      access: [
        {
          workspaceId: t.fx.workspace.id,
          workspaceName: t.fx.workspace.name,
          environment: 'Customer',
          access: 'write',
        },
      ],
      workspaceId: t.fx.workspace.id,
      environment: 'Customer',
      createdAt: T0,
      expiresAt: T2,
      renewAt: T1,
      ...overrides,
    });
    const entry = (action: AuditEntry['action'], sessionId: number): AuditEntry => ({
      action,
      workspaceId: t.fx.workspace.id,
      environment: 'Customer',
      changes: { session_id: { before: null, after: sessionId } },
    });

    it('takes a flow once: the second take of its state finds nothing', async () => {
      const written = flow();
      await t.store.insertOidcFlow(written, 100);
      expect(await t.store.takeOidcFlow(written.stateHash)).toEqual(written);
      expect(await t.store.takeOidcFlow(written.stateHash)).toBeNull();
      expect(await t.store.takeOidcFlow(randomHex())).toBeNull();
    });

    it('purges expired flows when a flow is written, at most the limit given', async () => {
      const expired = [flow(T0), flow(T0)];
      for (const old of expired) await t.store.insertOidcFlow(old, 0);
      const live = flow(T2);
      await t.store.insertOidcFlow(live, 1);
      const left = await Promise.all(expired.map((old) => t.store.takeOidcFlow(old.stateHash)));
      expect(left.filter((found) => found !== null)).toHaveLength(1);
      expect(await t.store.takeOidcFlow(live.stateHash)).toEqual(live);
    });

    it("inserts a person's session with its audit event, the person as the actor, and finds it by hash", async () => {
      const input = newSession();
      let id = 0;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        id = (
          await t.store.insertPersonSession(input, personContext(), (sessionId) =>
            entry('console_session.created', sessionId),
          )
        ).id;
      });
      expect(events).toMatchObject([
        {
          action: 'console_session.created',
          actor: { type: 'person', ...person },
          changes: { session_id: { after: id } },
        },
      ]);
      const { idHash: _hash, ...stored } = input;
      expect(await t.store.findPersonSession(input.idHash)).toEqual({ ...stored, id, lastSeenAt: T0 });
      expect(await t.store.findPersonSession(randomHex())).toBeNull();
    });

    it('records a use, lists the sessions of a workspace (of one person when asked) and deletes one once, audited', async () => {
      const mine = await t.store.insertPersonSession(newSession(), personContext(), (id) =>
        entry('console_session.created', id),
      );
      const other = { issuer: ISSUER, subject: 'someone-else', email: null };
      const theirs = await t.store.insertPersonSession(newSession({ person: other }), personContext(), (id) =>
        entry('console_session.created', id),
      );
      await t.store.touchPersonSession(mine.id, T1, T2);
      const all = await t.store.listPersonSessions(t.fx.workspace.id, undefined);
      expect(all.map((session) => session.id)).toEqual([theirs.id, mine.id]);
      expect(all[1]).toMatchObject({ lastSeenAt: T1, expiresAt: T2 });
      expect((await t.store.listPersonSessions(t.fx.workspace.id, person)).map((session) => session.id)).toEqual([
        mine.id,
      ]);
      expect(await t.store.listPersonSessions(t.fx.otherWorkspace.id, undefined)).toEqual([]);
      // By id: within its own workspace only.
      expect(await t.store.findPersonSessionById(t.fx.workspace.id, mine.id)).toEqual(all[1]);
      expect(await t.store.findPersonSessionById(t.fx.otherWorkspace.id, mine.id)).toBeNull();
      expect(await t.store.findPersonSessionById(t.fx.workspace.id, theirs.id + 1_000)).toBeNull();

      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(
          await t.store.deletePersonSession(mine.id, personContext(), entry('console_session.ended', mine.id)),
        ).toBe(true);
        expect(
          await t.store.deletePersonSession(mine.id, personContext(), entry('console_session.ended', mine.id)),
        ).toBe(false);
      });
      expect(events.map((event) => event.action)).toEqual(['console_session.ended']);
    });

    it('purges expired sessions, at most the limit given', async () => {
      await t.store.insertPersonSession(newSession({ expiresAt: T0 }), personContext(), (id) =>
        entry('console_session.created', id),
      );
      await t.store.insertPersonSession(newSession({ expiresAt: T0 }), personContext(), (id) =>
        entry('console_session.created', id),
      );
      const live = await t.store.insertPersonSession(newSession({ expiresAt: T2 }), personContext(), (id) =>
        entry('console_session.created', id),
      );
      expect(await t.store.purgePersonSessions(T1, 1)).toBe(1);
      expect(await t.store.purgePersonSessions(T1, 10)).toBe(1);
      expect((await t.store.listPersonSessions(t.fx.workspace.id, undefined)).map((session) => session.id)).toEqual([
        live.id,
      ]);
    });

    it('records an audit entry alone, and filters the trail by person: (issuer, sub), never the email', async () => {
      await t.store.recordAuditEntry(personContext(), {
        action: 'console_session.refused',
        workspaceId: t.fx.workspace.id,
        environment: null,
        changes: { reason: { before: null, after: 'no access' } },
      });
      // Same sub at another issuer, same email: another person.
      await t.store.recordAuditEntry(
        auditContext({
          actor: { type: 'person', issuer: 'https://other.example', subject: person.subject, email: person.email },
        }),
        { action: 'console_session.refused', workspaceId: t.fx.workspace.id, environment: null, changes: null },
      );
      const byPerson = await t.store.listAuditEvents({
        workspaceId: t.fx.workspace.id,
        person: { issuer: ISSUER, subject: person.subject },
        limit: 10,
      });
      expect(byPerson.map((event) => [event.action, event.actor])).toEqual([
        ['console_session.refused', { type: 'person', ...person }],
      ]);
    });
  });
}
