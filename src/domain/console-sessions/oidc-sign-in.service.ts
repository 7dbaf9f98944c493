import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { OidcSettings } from '../../config/oidc-settings.js';
import type { AuditEntry } from '../audit/audit-entry.js';
import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import { requireScope } from '../api-tokens/scopes.js';
import { hashSecret } from '../secrets.js';
import type { Caller } from '../tenancy.js';
import type { WorkspaceStore } from '../workspaces/workspaces.port.js';
import {
  consoleSessionAbsoluteExpiry,
  consoleSessionExpiry,
  consoleSessionTouch,
  isConsoleSessionLive,
} from './console-sessions.rules.js';
import { csrfTokenOf } from './console-sessions.service.js';
import { createOidcClient, OidcRefusal } from './oidc-client.js';
import { accessOf, claimValues, startingTenant } from './oidc-roles.rules.js';
import type { OidcSessionStore } from './oidc-sessions.port.js';
import type { Person, PersonCaller, PersonSessionRecord } from './oidc-session.records.js';

/*
 * Console sign-in through the company's identity provider (docs/deployment.md and docs/security.md,
 * "Console sign-in through an identity provider"). A flow's state, its nonce and its PKCE verifier are
 * usable on every worker and instance: the state's hash is in the database, and the nonce and the
 * verifier are HMACs of the state under the flow cookie's secret, which only the browser that started
 * the flow holds (and which never appears in a URL).
 */

/** A sign-in must come back from the provider within this. */
export const OIDC_FLOW_MS = 10 * 60 * 1000;
/**
 * A person's session is used for at most this long before the provider is asked again (a new sign-in,
 * silent while the person's provider session lasts): a person removed from a group at the provider
 * loses the access it gave within this time.
 */
export const PERSON_SESSION_RENEWAL_MS = 15 * 60 * 1000;
const PURGE_BATCH = 1000;

const PERSON_SESSION_SHAPE = /^ups_[0-9a-f]{64}$/;
export const isPersonSessionSecretShaped = (value: string) => PERSON_SESSION_SHAPE.test(value);

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');
const derived = (flowSecret: string, purpose: string, state: string) =>
  createHmac('sha256', flowSecret).update(`${purpose} ${state}`).digest('base64url');

/**
 * The console page a sign-in returns to: a path under /console, nothing else. Anything that could
 * leave this origin (`//evil.example`, `/\evil.example`, `https://…`) or this console is replaced by
 * the console's start page.
 */
export function safeReturnTo(returnTo: string | undefined): string {
  const fallback = '/console/';
  if (returnTo === undefined || !returnTo.startsWith('/') || /[\\\s]/.test(returnTo) || returnTo.startsWith('//'))
    return fallback;
  let url: URL;
  try {
    url = new URL(returnTo, 'http://console.invalid');
  } catch {
    return fallback;
  }
  if (url.origin !== 'http://console.invalid') return fallback;
  if (url.pathname !== '/console' && !url.pathname.startsWith('/console/')) return fallback;
  if (url.pathname.startsWith('/console/oidc/')) return fallback;
  return url.pathname + url.search;
}

/** A person's live console session as a request sees it. */
export interface PersonConsoleSession {
  caller: PersonCaller;
  record: PersonSessionRecord;
  csrfToken: string;
  absoluteExpiresAt: string;
}

function personCaller(record: PersonSessionRecord, requestId: string | null): PersonCaller {
  const granted = record.access.find(
    (tenant) => tenant.workspaceId === record.workspaceId && tenant.environment === record.environment,
  );
  return {
    tenant: { workspaceId: record.workspaceId, environment: record.environment },
    // A session's tenant is always one of its grants; read is the floor should the two ever disagree.
    scope: granted?.access ?? 'read',
    actor: { type: 'person', ...record.person },
    access: record.access,
    requestId,
    rateLimit: null,
  };
}

const sessionChanges = (sessionId: number, ended: boolean) => ({
  session_id: ended ? { before: sessionId, after: null } : { before: null, after: sessionId },
});

export type OidcSignInService = ReturnType<typeof createOidcSignInService>;

export function createOidcSignInService({
  store,
  clock,
  settings,
}: {
  store: OidcSessionStore & Pick<WorkspaceStore, 'listWorkspaces'>;
  clock: Clock;
  settings: OidcSettings;
}) {
  const client = createOidcClient(settings);
  const plus = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();

  async function refuse(person: Person, requestId: string | null, reason: string): Promise<never> {
    const workspaces = await store.listWorkspaces();
    const first = workspaces[0];
    // A refused person belongs to no workspace: the refusal is recorded in the first (the default one).
    if (first) {
      const entry: AuditEntry = {
        action: 'console_session.refused',
        workspaceId: first.id,
        environment: null,
        changes: { reason: { before: null, after: reason } },
      };
      await store.recordAuditEntry({ at: clock(), actor: { type: 'person', ...person }, requestId }, entry);
    }
    throw new OidcRefusal('no_access', reason);
  }

  return {
    settings,

    /** Starts a sign-in: the provider's URL to send the browser to, and the flow cookie's secret. */
    async start(returnTo: string | undefined, redirectUri: string): Promise<{ url: string; flowSecret: string }> {
      const state = randomBytes(32).toString('base64url');
      const flowSecret = randomBytes(32).toString('base64url');
      const url = await client.authorizationUrl({
        redirectUri,
        state,
        nonce: derived(flowSecret, 'nonce', state),
        codeChallenge: sha256(derived(flowSecret, 'pkce', state)),
      });
      const now = clock();
      await store.insertOidcFlow(
        {
          stateHash: sha256(state),
          browserHash: sha256(flowSecret),
          returnTo: safeReturnTo(returnTo),
          createdAt: now,
          expiresAt: plus(now, OIDC_FLOW_MS),
        },
        PURGE_BATCH,
      );
      return { url, flowSecret };
    },

    /** Finishes a sign-in; returns the new session's secret and where to land. Throws OidcRefusal. */
    async finish(parts: {
      state: string | undefined;
      code: string | undefined;
      error: string | undefined;
      flowSecret: string | undefined;
      redirectUri: string;
      requestId: string | null;
    }): Promise<{ secret: string; returnTo: string }> {
      const { state, flowSecret } = parts;
      const flow = state ? await store.takeOidcFlow(sha256(state)) : null;
      const now = clock();
      // One message for every way a state can be wrong: nothing tells a prober which one it was.
      if (
        !state ||
        !flow ||
        flowSecret === undefined ||
        flow.browserHash !== sha256(flowSecret) ||
        Date.parse(now) >= Date.parse(flow.expiresAt)
      )
        throw new OidcRefusal(
          'state',
          'This sign-in cannot be finished: it was already used, it expired, or it was started in another browser. Start again.',
        );
      if (parts.error !== undefined || parts.code === undefined)
        throw new OidcRefusal(
          'provider',
          `The identity provider did not sign you in (${(parts.error ?? 'no code').replace(/[^\w.-]/g, '').slice(0, 60)}).`,
        );
      const token = await client.redeem({
        code: parts.code,
        redirectUri: parts.redirectUri,
        codeVerifier: derived(flowSecret, 'pkce', state),
        nonce: derived(flowSecret, 'nonce', state),
      });
      const person: Person = { issuer: settings.issuer, subject: token.subject, email: token.email };
      const values = claimValues(token.claims, settings.rolesClaim);
      const access = accessOf(values, settings.roles, await store.listWorkspaces());
      const tenant = startingTenant(access);
      if (!tenant)
        return refuse(
          person,
          parts.requestId,
          values.length === 0
            ? `The identity provider sent no "${settings.rolesClaim}" claim for this account, so no console access is mapped to it.`
            : `None of this account's ${values.length} "${settings.rolesClaim}" value(s) is mapped to console access.`,
        );
      const secret = `ups_${randomBytes(32).toString('hex')}`;
      await store.purgePersonSessions(now, PURGE_BATCH).catch(() => undefined);
      await store.insertPersonSession(
        {
          idHash: hashSecret(secret),
          person,
          access,
          workspaceId: tenant.workspaceId,
          environment: tenant.environment,
          createdAt: now,
          expiresAt: consoleSessionExpiry(now, now),
          renewAt: plus(now, PERSON_SESSION_RENEWAL_MS),
        },
        { at: now, actor: { type: 'person', ...person }, requestId: parts.requestId },
        (sessionId) => ({
          action: 'console_session.created',
          workspaceId: tenant.workspaceId,
          environment: tenant.environment,
          changes: { ...sessionChanges(sessionId, false), access: { before: null, after: tenant.access } },
        }),
      );
      return { secret, returnTo: flow.returnTo };
    },

    /** The live session a person's cookie names; `consoleSessionEnded` for any other, and once it is due for renewal. */
    async authenticate(secret: string, requestId: string | null): Promise<PersonConsoleSession> {
      const found = isPersonSessionSecretShaped(secret) ? await store.findPersonSession(hashSecret(secret)) : null;
      const now = clock();
      if (!found || !isConsoleSessionLive(found, now)) throw failure.consoleSessionEnded();
      if (Date.parse(now) >= Date.parse(found.renewAt)) throw failure.consoleSessionDueForRenewal();
      const touch = consoleSessionTouch(found, now);
      if (touch) await store.touchPersonSession(found.id, touch.lastSeenAt, touch.expiresAt).catch(() => undefined);
      const record = { ...found, ...touch };
      return {
        caller: personCaller(record, requestId),
        record,
        csrfToken: csrfTokenOf(secret),
        absoluteExpiresAt: consoleSessionAbsoluteExpiry(record),
      };
    },

    /** Ends the session; returns where to end the provider's session too, when it advertises that. */
    async signOut(session: PersonConsoleSession, postLogoutRedirectUri: string): Promise<string | undefined> {
      await endSession(session.record, session.caller);
      return client.endSessionUrl(postLogoutRedirectUri);
    },
  };

  function endSession(record: PersonSessionRecord, by: Pick<Caller, 'actor' | 'requestId'>) {
    return endPersonSession(store, clock, record, by);
  }
}

/** Deletes a person's session with its `console_session.ended` event, whoever ends it. */
function endPersonSession(
  store: Pick<OidcSessionStore, 'deletePersonSession'>,
  clock: Clock,
  record: PersonSessionRecord,
  by: Pick<Caller, 'actor' | 'requestId'>,
): Promise<boolean> {
  return store.deletePersonSession(
    record.id,
    { at: clock(), actor: by.actor, requestId: by.requestId },
    {
      action: 'console_session.ended',
      workspaceId: record.workspaceId,
      environment: record.environment,
      changes: sessionChanges(record.id, true),
    },
  );
}

export type PersonSessionAdmin = ReturnType<typeof createPersonSessionAdmin>;

/** An admin's view of people's console sessions in its workspace: list them, end one (docs/security.md#admin-console-sessions). */
export function createPersonSessionAdmin({ store, clock }: { store: OidcSessionStore; clock: Clock }) {
  return {
    async listSessions(caller: Caller, person: { issuer: string; subject: string } | undefined) {
      requireScope(caller, 'admin');
      return store.listPersonSessions(caller.tenant.workspaceId, person);
    },

    /** Ends a person's session of the caller's workspace; false when there is none by that id. */
    async endSession(caller: Caller, id: number): Promise<boolean> {
      requireScope(caller, 'admin');
      const session = await store.findPersonSessionById(caller.tenant.workspaceId, id);
      return session ? endPersonSession(store, clock, session, caller) : false;
    },

    /** Ends every session of one person acting in the caller's workspace, each audited; how many ended. */
    async endPersonSessions(caller: Caller, person: { issuer: string; subject: string }): Promise<number> {
      requireScope(caller, 'admin');
      let ended = 0;
      // At most 1000 a listing: one sign-in per request at most, so the loop ends.
      for (;;) {
        const sessions = await store.listPersonSessions(caller.tenant.workspaceId, person);
        if (sessions.length === 0) return ended;
        for (const session of sessions) if (await endPersonSession(store, clock, session, caller)) ended += 1;
      }
    },
  };
}
