// Revoking embed tokens (docs/api.md, "Revoking embed tokens"): the published document beside the
// JWKS, the explicit revoke, and online verify refusing what was revoked.
import jwt from 'jsonwebtoken';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, expectUnchanged, TRANSPORTS, useClient } from './helpers.js';
import type { Client } from '../support/http-client.js';
import { apiToken } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';
import { adminOk, ADMIN } from './admin-helpers.js';

const EMBED_PATH = '/api/user/embed_token';
const REVOKE_PATH = '/api/user/embed_token/revoke';
const DOCUMENT_PATH = '/w/default/.well-known/revocations.json';

interface RevocationDocument {
  issuer: string;
  generation: number;
  max_age: number;
  groups: Array<[string, number, number]>;
  tokens: Array<[string, number]>;
}

const claimsOf = (token: string) => jwt.decode(token, { json: true }) as jwt.JwtPayload & { grp: string; gen: number };

describe('embed token revocation', () => {
  const fixture = useClient(TRANSPORTS[1]!);
  let client: Client;
  const as = (
    scope: 'read' | 'write' | 'admin',
    environment: 'Customer' | 'Testing' = 'Customer',
    workspace: 'default' | 'other' = 'default',
  ) => apiToken(fixture.t, { scope, environment, workspace });
  const mint = async (userGroupId: string) =>
    expectSuccess(
      await client({ method: 'POST', path: EMBED_PATH, token: as('read'), body: { user_group_id: userGroupId } }),
    ).embed_token as string;
  const verifyOnline = (token: string) =>
    client({ method: 'POST', path: VERIFY_PATH, token: as('read'), body: { token } });
  const revoke = (body: Record<string, unknown>, token = as('write')) =>
    client({ method: 'POST', path: REVOKE_PATH, token, body });
  const document = async (path = DOCUMENT_PATH): Promise<RevocationDocument> => {
    const res = await client({ method: 'GET', path });
    expect(res.status, res.raw).toBe(200);
    return res.body as RevocationDocument;
  };
  /** Whether the document revokes the token, as an offline verifier decides. */
  const revokes = (doc: RevocationDocument, token: string) => {
    const { grp, gen, jti } = claimsOf(token);
    return doc.groups.some(([name, before]) => name === grp && gen < before) || doc.tokens.some(([id]) => id === jti);
  };

  beforeAll(() => {
    client = fixture.client;
  });

  it('publishes each issuer’s document publicly, cacheably, with an ETag a verifier sends back for a 304', async () => {
    const res = await client({ method: 'GET', path: DOCUMENT_PATH, headers: { origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.body).toMatchObject({ issuer: 'http://127.0.0.1:8080/w/default', max_age: 60 });
    const again = await client({ method: 'GET', path: DOCUMENT_PATH, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.raw).toBe('');
    // The Testing issuer has its own; a workspace that does not exist answers as one with nothing revoked.
    expect((await document('/w/default/testing/.well-known/revocations.json')).issuer).toBe(
      'http://127.0.0.1:8080/w/default/testing',
    );
    expect(await document('/w/no-such-workspace/.well-known/revocations.json')).toMatchObject({
      groups: [],
      tokens: [],
    });
    const metrics = (await fixture.t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^ugs_embed_token_revocation_documents_total\{how="rendered"\} [1-9]/m);
    expect(metrics).toMatch(/^ugs_embed_token_revocation_documents_total\{how="not_modified"\} [1-9]/m);
  });

  it('lists a rotated group under its keyed name: its earlier tokens revoked, one minted just after not, a rename escaping nothing', async () => {
    const group = await makeGroup(fixture.t);
    const before = await mint(group.provided_id);
    const other = await makeGroup(fixture.t);
    const othersToken = await mint(other.provided_id);
    expectSuccess(
      await client({ method: 'POST', path: USER_PATH, token: as('write'), body: { current_token: group.token } }),
    );
    // Minted in the same second as the rotation, and still valid: the order is the token generation's.
    const after = await mint(group.provided_id);
    const doc = await document();
    expect(revokes(doc, before)).toBe(true);
    expect(revokes(doc, after)).toBe(false);
    expect(revokes(doc, othersToken)).toBe(false);
    expectError(await verifyOnline(before), 404, 'user_group_not_found');
    expectSuccess(await verifyOnline(after));
    // No group is named in clear text.
    const text = JSON.stringify(doc);
    expect(text).not.toContain(group.provided_id);
    expect(doc.groups.map(([name]) => name)).not.toContain(String(group.team_id));
    // A new provided id names the same group: its tokens keep the name the entry has.
    expectSuccess(
      await client({
        method: 'PUT',
        path: USER_PATH,
        token: as('write'),
        body: { user_group_id: group.provided_id, new_user_group_id: `${group.provided_id}-renamed` },
      }),
    );
    expect(claimsOf(await mint(`${group.provided_id}-renamed`)).grp).toBe(claimsOf(before).grp);
  });

  it('lists a deleted group: every token it had is revoked', async () => {
    const group = await makeGroup(fixture.t);
    const token = await mint(group.provided_id);
    expectSuccess(
      await client({
        method: 'DELETE',
        path: USER_PATH,
        token: as('write'),
        body: { user_group_id: group.provided_id },
      }),
    );
    expect(revokes(await document(), token)).toBe(true);
  });

  it('revokes one token given the token itself: online verify refuses it at once, the group’s others still verify; audited', async () => {
    const group = await makeGroup(fixture.t);
    const revoked = await mint(group.provided_id);
    const kept = await mint(group.provided_id);
    const body = expectSuccess(await revoke({ embed_token: revoked }));
    expect(body.revoked).toEqual({ scope: 'token', jti: claimsOf(revoked).jti });
    expect(body.user_group.user_group_id ?? body.user_group.provided_id).toBe(group.provided_id);
    expectError(await verifyOnline(revoked), 404, 'user_group_not_found');
    expectSuccess(await verifyOnline(kept));
    const doc = await document();
    expect(revokes(doc, revoked)).toBe(true);
    expect(revokes(doc, kept)).toBe(false);
    expect(doc.tokens.find(([jti]) => jti === claimsOf(revoked).jti)?.[1]).toBe(claimsOf(revoked).exp);
    // Again: the same answer, nothing more written.
    expectSuccess(await revoke({ embed_token: revoked }));
    expect((await fixture.t.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(
      /^ugs_embed_token_revocations_total\{scope="token"\} [1-9]/m,
    );
    const events = (
      await adminOk(fixture.t, { path: ADMIN.auditEvents, query: { action: 'embed_token.revoked', limit: 100 } })
    ).audit_events as Array<{ team_id: number; changes: Record<string, { after: unknown }> }>;
    const mine = events.filter((event) => event.team_id === group.team_id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.changes).toMatchObject({
      embed_tokens_revoked: { after: 'one' },
      jti: { after: claimsOf(revoked).jti },
    });
  });

  it('revokes every current token of a group by its id; tokens minted afterwards verify', async () => {
    const group = await makeGroup(fixture.t);
    const first = await mint(group.provided_id);
    const second = await mint(group.provided_id);
    const body = expectSuccess(await revoke({ user_group_id: group.provided_id }));
    expect(body.revoked).toEqual({ scope: 'group', jti: null });
    expectError(await verifyOnline(first), 404, 'user_group_not_found');
    expectError(await verifyOnline(second), 404, 'user_group_not_found');
    const later = await mint(group.provided_id);
    expectSuccess(await verifyOnline(later));
    const doc = await document();
    expect([revokes(doc, first), revokes(doc, second), revokes(doc, later)]).toEqual([true, true, false]);
    // The group token itself is untouched.
    expectSuccess(await client({ method: 'POST', path: VERIFY_PATH, token: as('read'), body: { token: group.token } }));
  });

  it('refuses what it cannot revoke, changing nothing', async () => {
    const group = await makeGroup(fixture.t);
    const token = await mint(group.provided_id);
    const [header, , signature] = token.split('.') as [string, string, string];
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claimsOf(token), jti: '0.forged' })).toString('base64url')}.${signature}`;
    await expectUnchanged(fixture.t, async () => {
      expectError(await revoke({}), 400, 'missing_field');
      expectError(await revoke({ embed_token: token, user_group_id: group.provided_id }), 400, 'invalid_field');
      expectError(await revoke({ embed_token: token }, as('read')), 403, 'insufficient_scope');
      // Only the token's own environment and workspace may revoke it; a forged one is nobody's.
      expectError(await revoke({ embed_token: token }, as('write', 'Testing')), 404, 'user_group_not_found');
      expectError(await revoke({ embed_token: token }, as('write', 'Customer', 'other')), 404, 'user_group_not_found');
      expectError(await revoke({ embed_token: forged }), 404, 'user_group_not_found');
      expectError(await revoke({ embed_token: 'not-a-token' }), 404, 'user_group_not_found');
      expectError(await revoke({ user_group_id: 'no-such-group' }), 404, 'user_group_not_found');
      expectError(
        await revoke({ user_group_id: group.provided_id }, as('write', 'Testing')),
        404,
        'user_group_not_found',
      );
    });
    expectSuccess(await verifyOnline(token));
  });
});
