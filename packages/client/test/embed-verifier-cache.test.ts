// The offline verifier's memory of verified tokens against a real server: a token seen
// before skips only its signature. Issuer, audience, origin, exp and nbf hold on every call (exp to the
// second); a token is forgotten when its key leaves the JWKS at a fetch; never more than
// `tokenCacheSize` tokens are held, and a forgotten one is verified in full again. A remembered token
// is recognised by the claims object it returns: the same (frozen) object on every call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_KEY_HELD_MS } from '../../../src/domain/signing-keys/signing-keys.service.js';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';
import { createClient, createEmbedTokenVerifier, EmbedOriginError, type EmbedClaims } from '../src/index.js';

const ORIGIN = 'https://app.example.com';

describe('createEmbedTokenVerifier, its memory of verified tokens', () => {
  let t: TestApp;
  let baseUrl = '';

  beforeAll(async () => {
    t = await createTestApp({ publicUrl: () => baseUrl });
    baseUrl = await t.listen();
    await createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin }).getOrCreateUserGroup({
      user_group_id: 'cached',
      properties: { plan: 'pro', regions: ['eu'] },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  const issuer = () => `${baseUrl}/w/default`;
  const mint = async (body: { embed_id?: string; origin?: string; expires_in?: number } = {}) =>
    (
      await createClient({ baseUrl, apiToken: t.tokens.default.Customer.read }).mintEmbedToken({
        user_group_id: 'cached',
        ...body,
      })
    ).embed_token;

  it('checks audience, origin, exp and nbf on every call to a remembered token, which keeps its place after a refusal', async () => {
    const token = await mint({ embed_id: 'board', origin: ORIGIN, expires_in: 600 });
    const unpinned = await mint({ embed_id: 'board' });
    const verify = createEmbedTokenVerifier({ issuer: issuer(), audience: ['board', 'sales'] });

    const claims = await verify(token, { origin: ORIGIN });
    expect(await verify(token, { origin: ORIGIN })).toBe(claims);
    expect(Object.isFrozen(claims) && Object.isFrozen(claims.ugs) && Object.isFrozen(claims.ugs.properties)).toBe(true);
    expect(() => {
      (claims.ugs.properties as Record<string, unknown>).plan = 'free';
    }).toThrow(TypeError);

    await expect(verify(token, { origin: 'https://evil.example.com' })).rejects.toBeInstanceOf(EmbedOriginError);
    await expect(verify(token, { origin: ORIGIN, audience: 'sales' })).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      claim: 'aud',
    });
    expect(await verify(token, { origin: ORIGIN, audience: ['board'] })).toBe(claims);

    // exp to the second, nbf likewise, whatever was remembered.
    const exp = claims.exp!;
    expect(await verify(token, { currentDate: new Date(exp * 1000 - 1) })).toBe(claims);
    await expect(verify(token, { currentDate: new Date(exp * 1000) })).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
      claim: 'exp',
    });
    await expect(verify(token, { currentDate: new Date(claims.nbf! * 1000 - 1) })).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      claim: 'nbf',
    });
    expect(await verify(token, { origin: ORIGIN })).toBe(claims);

    // Remembered without an origin asked, refused when one is.
    const unpinnedClaims = await verify(unpinned);
    expect(await verify(unpinned)).toBe(unpinnedClaims);
    await expect(verify(unpinned, { origin: ORIGIN })).rejects.toBeInstanceOf(EmbedOriginError);

    // Another verifier remembers for itself, under its own issuer and audience.
    await expect(createEmbedTokenVerifier({ issuer: issuer(), audience: 'sales' })(token)).rejects.toMatchObject({
      claim: 'aud',
    });
    await expect(
      createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default/testing`, audience: 'board' })(token),
    ).rejects.toThrow();
  });

  it('holds at most tokenCacheSize tokens, least recently used forgotten first, and verifies a forgotten one in full', async () => {
    const tokens = [];
    for (let i = 0; i < 8; i += 1) tokens.push(await mint({ origin: ORIGIN, expires_in: 600 + i }));
    const verify = createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed', tokenCacheSize: 3 });
    const first: EmbedClaims[] = [];
    for (const token of tokens) first.push(await verify(token));

    // The last three are held (checked in the order they were used, which keeps that order)...
    for (const i of [5, 6, 7]) expect(await verify(tokens[i]!)).toBe(first[i]);
    // ...and none of the five before them: each is verified again, in full, to the same claims.
    const second: EmbedClaims[] = [];
    for (const i of [0, 1, 2, 3, 4]) {
      second[i] = await verify(tokens[i]!);
      expect(second[i]).not.toBe(first[i]);
      expect(second[i]).toEqual(first[i]);
    }
    // Held now: 2, 3, 4 (2 the least recently used). Using 2 keeps it: the next token verified pushes
    // out 3 instead.
    expect(await verify(tokens[2]!)).toBe(second[2]);
    await verify(tokens[0]!);
    expect(await verify(tokens[2]!)).toBe(second[2]);
    expect(await verify(tokens[4]!)).toBe(second[4]);
    expect(await verify(tokens[3]!)).not.toBe(second[3]);

    // A forgotten token goes through every check again.
    const forgotten = createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed', tokenCacheSize: 1 });
    const claims = await forgotten(tokens[0]!, { origin: ORIGIN });
    await forgotten(tokens[1]!);
    await expect(forgotten(tokens[0]!, { origin: 'https://evil.example.com' })).rejects.toBeInstanceOf(
      EmbedOriginError,
    );
    await expect(forgotten(tokens[0]!, { currentDate: new Date(claims.exp! * 1000) })).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
    });
    await expect(forgotten(tokens[0]!, { audience: 'board' })).rejects.toMatchObject({ claim: 'aud' });

    // 0 remembers nothing; a size that is not a whole number ≥ 0 is refused at once.
    const none = createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed', tokenCacheSize: 0 });
    const once = await none(tokens[0]!);
    expect(await none(tokens[0]!)).not.toBe(once);
    for (const tokenCacheSize of [-1, 1.5, Number.NaN]) {
      expect(() => createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed', tokenCacheSize })).toThrow(
        TypeError,
      );
    }
    // So is a verifier without an audience (from JavaScript, where the types do not hold), or a call's
    // audience that is not one, rather than failing every call with a TypeError of its own.
    for (const audience of [undefined, 42, [42], { aud: 'board' }]) {
      expect(() => createEmbedTokenVerifier({ issuer: issuer(), audience } as never)).toThrow(
        /^audience must be an embed_id/,
      );
    }
    await expect(none(tokens[0]!, { audience: 42 } as never)).rejects.toThrow(/^verify's audience must be an embed_id/);
  });

  it('refuses a token over 8 KiB, and any spelling of a signature but the canonical one', async () => {
    const token = await mint();
    const verify = createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed' });
    expect((await verify(token)).sub).toBe('cached');
    await expect(verify(`${token}${'A'.repeat(8193 - token.length)}`)).rejects.toMatchObject({
      code: 'ERR_JWT_INVALID',
    });
    // The last character of a 64-byte signature carries 2 bits; its other 4 must be zero. 'B' after
    // 'A' (or 'R' after 'Q', …) decodes to the same bytes, a second string for the same token.
    const last = token.at(-1)!;
    const twin = `${token.slice(0, -1)}${String.fromCharCode(last.charCodeAt(0) + 1)}`;
    expect(Buffer.from(twin.split('.')[2]!, 'base64url')).toEqual(Buffer.from(token.split('.')[2]!, 'base64url'));
    await expect(verify(twin)).rejects.toMatchObject({ code: 'ERR_JWS_INVALID' });
    await expect(verify(`${token}=`)).rejects.toMatchObject({ code: 'ERR_JWS_INVALID' });
    expect((await verify(token)).sub).toBe('cached');
  });
});

describe('createEmbedTokenVerifier, a signing key leaving the JWKS', () => {
  let t: TestApp;
  let baseUrl = '';
  let now = Date.parse('2026-11-24T10:00:00.000Z');

  beforeAll(async () => {
    t = await createTestApp({ publicUrl: () => baseUrl, clock: () => new Date(now).toISOString() });
    baseUrl = await t.listen();
    await createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin }).getOrCreateUserGroup({
      user_group_id: 'rotated',
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  const read = () => createClient({ baseUrl, apiToken: t.tokens.default.Customer.read });
  const mint = async () => (await read().mintEmbedToken({ user_group_id: 'rotated', expires_in: 3600 })).embed_token;
  const publishedKids = async () =>
    (
      (await (await fetch(`${baseUrl}/w/default/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }
    ).keys.map((key) => key.kid);

  it('forgets the tokens of a removed key at the next fetch of the JWKS, whether its age or an unknown kid prompts it', async () => {
    const issuer = `${baseUrl}/w/default`;
    // The renderer's clock stays where the token is alive; the service's moves on until the key it was
    // signed with has left the JWKS.
    const minted = { currentDate: new Date(now) };
    const oldToken = await mint();
    const [oldKid] = await publishedKids();

    // Keys fetched again on every call (cacheMaxAgeMs 0): a fetch that keeps the key keeps its tokens.
    const everyCall = createEmbedTokenVerifier({ issuer, audience: 'ugs-embed', cacheMaxAgeMs: 0 });
    // Keys trusted 10 minutes (the default); an unknown kid fetches them at once (cooldown 0).
    const onUnknownKid = createEmbedTokenVerifier({ issuer, audience: 'ugs-embed', cooldownMs: 0 });
    const byAge = await everyCall(oldToken, minted);
    const byKid = await onUnknownKid(oldToken, minted);
    expect(await everyCall(oldToken, minted)).toBe(byAge);
    expect(await onUnknownKid(oldToken, minted)).toBe(byKid);

    // Rotated: the old key stays published while its tokens may live, so its tokens stay remembered.
    await createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin }).rotateSigningKey();
    expect(await publishedKids()).toHaveLength(2);
    expect(await everyCall(oldToken, minted)).toBe(byAge);

    // A day (and the bound for which another instance may still sign with it) later, it has left the JWKS.
    now += 86_400_000 + CURRENT_KEY_HELD_MS + 1_000;
    expect(await publishedKids()).not.toContain(oldKid);
    await expect(everyCall(oldToken, minted)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    // Not fetched since: this verifier cannot know yet (cacheMaxAgeMs bounds how long)...
    expect(await onUnknownKid(oldToken, minted)).toBe(byKid);
    // ...until a token of the new key makes it fetch the JWKS.
    const newToken = await mint();
    expect((await onUnknownKid(newToken, { currentDate: new Date(now) })).sub).toBe('rotated');
    await expect(onUnknownKid(oldToken, minted)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    expect((await everyCall(newToken, { currentDate: new Date(now) })).sub).toBe('rotated');
  });
});
