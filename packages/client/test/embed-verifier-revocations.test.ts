// The offline verifier's revocation checking against a real server (docs/api.md, "Revoking embed
// tokens"), in both builds (node:crypto and WebCrypto): a rotation, a deletion and an explicit revoke
// are refused once the staleness bound has passed; other groups' tokens still verify; the document is
// fetched at most once per bound, merged (never replaced by an older copy), and tokens are refused
// while it cannot be refreshed past the bound. No timed assertion: each refusal is asserted after
// waiting past a short bound; how long it took is printed, as the measurement docs/renderers.md states.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';
import { createClient } from '../src/index.js';
import type * as ClientModuleNamespace from '../src/index.js';

type ClientModule = typeof ClientModuleNamespace;

const BOUND_MS = 300;

/** Each build's verifier and errors: the WebCrypto one is the module loaded again with `#crypto` its browsers'. */
const BUILDS: Array<[string, () => Promise<ClientModule>]> = [
  ['node:crypto', () => import('../src/index.js')],
  [
    'WebCrypto',
    async () => {
      vi.resetModules();
      vi.doMock('#crypto', () => import('../src/crypto/web.js'));
      const loaded = await import('../src/index.js');
      vi.doUnmock('#crypto');
      return loaded;
    },
  ],
];

let t: TestApp;
let baseUrl = '';

beforeAll(async () => {
  t = await createTestApp({ publicUrl: () => baseUrl });
  baseUrl = await t.listen();
});

afterAll(async () => {
  await t?.close();
});

const admin = () => createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin });
const mint = async (userGroupId: string) =>
  (
    await createClient({ baseUrl, apiToken: t.tokens.default.Customer.read }).mintEmbedToken({
      user_group_id: userGroupId,
    })
  ).embed_token;

/** Verifies until the verifier refuses the token (or `limitMs` passes); answers how long that took and the refusal. */
async function refusalOf(verify: (token: string) => Promise<unknown>, token: string, limitMs: number) {
  const started = performance.now();
  for (;;) {
    try {
      await verify(token);
    } catch (error) {
      return { afterMs: performance.now() - started, error };
    }
    if (performance.now() - started > limitMs) return { afterMs: performance.now() - started, error: undefined };
    await sleep(10);
  }
}

describe.each(BUILDS)('the offline verifier with revocation checking (%s)', (build, load) => {
  let createEmbedTokenVerifier: ClientModule['createEmbedTokenVerifier'];
  let EmbedTokenRevokedError: ClientModule['EmbedTokenRevokedError'];
  let RevocationsUnavailableError: ClientModule['RevocationsUnavailableError'];
  beforeAll(async () => {
    ({ createEmbedTokenVerifier, EmbedTokenRevokedError, RevocationsUnavailableError } = await load());
  });

  it('refuses rotated, deleted and revoked groups’ tokens and a revoked token within the bound; other tokens verify', async () => {
    const ids = ['rotated', 'deleted', 'revoked-group', 'revoked-token', 'bystander'].map((id) => `${build}-${id}`);
    for (const id of ids) await admin().getOrCreateUserGroup({ user_group_id: id });
    const tokens = await Promise.all(ids.map(mint));
    const kept = await mint(ids[3]!); // another token of the group whose one token is revoked
    const verify = createEmbedTokenVerifier({
      issuer: `${baseUrl}/w/default`,
      audience: 'ugs-embed',
      revocations: { maxAgeMs: BOUND_MS },
    });
    for (const token of [...tokens, kept]) await verify(token);

    const { user_group: rotated } = await admin()
      .getOrCreateUserGroup({ user_group_id: ids[0]! })
      .then((r) => ({
        user_group: r.userGroup,
      }));
    await admin().rotateUserGroupToken(rotated.token);
    await admin().deleteUserGroup({ user_group_id: ids[1]! });
    await admin().revokeUserGroupEmbedTokens(ids[2]!);
    await admin().revokeEmbedToken(tokens[3]!);
    const revokedAt = performance.now();
    // Minted after the rotation: valid, whatever second it was minted in.
    const fresh = await mint(ids[0]!);

    // Measured: how long after the revokes' answers this verifier first refuses the revoked token.
    const first = await refusalOf(verify, tokens[3]!, 10 * BOUND_MS);
    expect(first.error).toBeInstanceOf(EmbedTokenRevokedError);
    process.stdout.write(
      `[${build}] first refusal ${Math.round(first.afterMs)} ms after the revokes (bound ${BOUND_MS} ms)\n`,
    );
    await sleep(Math.max(0, BOUND_MS - (performance.now() - revokedAt)) + 20);
    for (const token of tokens.slice(0, 4)) await expect(verify(token)).rejects.toBeInstanceOf(EmbedTokenRevokedError);
    expect((await verify(tokens[4]!)).sub).toBe(ids[4]);
    expect((await verify(kept)).sub).toBe(ids[3]);
    expect((await verify(fresh)).sub).toBe(ids[0]);
  });

  it('fetches at most once per bound (a 304 when unchanged), and keeps an entry that a later copy lacks', async () => {
    const id = `${build}-merge`;
    await admin().getOrCreateUserGroup({ user_group_id: id });
    const token = await mint(id);
    const statuses: number[] = [];
    let serveOlderCopy = false;
    const emptyCopy = { issuer: `${baseUrl}/w/default`, generation: 0, max_age: 60, groups: [], tokens: [] };
    const verify = createEmbedTokenVerifier({
      issuer: `${baseUrl}/w/default`,
      audience: 'ugs-embed',
      revocations: {
        maxAgeMs: BOUND_MS,
        fetch: async (input, init) => {
          // Another instance's older copy, e.g. from a cache: no entry at all.
          const response = serveOlderCopy
            ? new Response(JSON.stringify(emptyCopy), { status: 200, headers: { etag: '"older"' } })
            : await fetch(input, init);
          statuses.push(response.status);
          return response;
        },
      },
    });
    for (let i = 0; i < 50; i += 1) await verify(token);
    expect(statuses).toEqual([200]);
    await sleep(BOUND_MS + 20);
    await verify(token);
    expect(statuses).toEqual([200, 304]);

    await admin().revokeEmbedToken(token);
    await sleep(BOUND_MS + 20);
    await expect(verify(token)).rejects.toBeInstanceOf(EmbedTokenRevokedError);
    serveOlderCopy = true;
    await sleep(BOUND_MS + 20);
    await expect(verify(token)).rejects.toBeInstanceOf(EmbedTokenRevokedError);
    expect(statuses).toEqual([200, 304, 200, 200]);
  });

  it('fails closed: refuses every token while the document cannot be refreshed past the bound, and recovers', async () => {
    const id = `${build}-closed`;
    await admin().getOrCreateUserGroup({ user_group_id: id });
    const token = await mint(id);
    let down = false;
    const verify = createEmbedTokenVerifier({
      issuer: `${baseUrl}/w/default`,
      audience: 'ugs-embed',
      revocations: {
        maxAgeMs: BOUND_MS,
        retryMs: 50,
        fetch: async (input, init) => (down ? new Response('unavailable', { status: 503 }) : fetch(input, init)),
      },
    });
    await verify(token);
    down = true;
    // Within the bound the copy held still answers.
    await sleep(BOUND_MS + 20);
    await expect(verify(token)).rejects.toBeInstanceOf(RevocationsUnavailableError);
    await expect(verify(token)).rejects.toBeInstanceOf(RevocationsUnavailableError);
    down = false;
    await sleep(60);
    expect((await verify(token)).sub).toBe(id);
  });
});
