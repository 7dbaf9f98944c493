// The offline verifier against a real server (docs/api.md#embed-tokens): pinned to one environment's
// issuer, the origin pinned by the renderer, and one signature (low S) per token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';
import { createClient, createEmbedTokenVerifier, EmbedOriginError } from '../src/index.js';

let t: TestApp;
let baseUrl = '';

beforeAll(async () => {
  t = await createTestApp({ publicUrl: () => baseUrl });
  baseUrl = await t.listen();
});

afterAll(async () => {
  await t?.close();
});

const clientOf = (environment: 'Customer' | 'Testing', scope: 'read' | 'admin' = 'read') =>
  createClient({ baseUrl, apiToken: t.tokens.default[environment][scope] });

// P-256's group order: (r, s) and (r, n - s) both verify for a verifier that does not insist on low S.
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function withOtherS(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  const s = P256_ORDER - BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  Buffer.from(s.toString(16).padStart(64, '0'), 'hex').copy(bytes, 32);
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

describe('createEmbedTokenVerifier, sealed by environment', () => {
  it('configured for Customer, refuses every token minted with a Testing token; configured for Testing, accepts them', async () => {
    await clientOf('Testing', 'admin').getOrCreateUserGroup({ user_group_id: 'sealed-testing', properties: { a: 1 } });
    const testing = clientOf('Testing');
    const bodies = [
      { user_group_id: 'sealed-testing' },
      { user_group_id: 'sealed-testing', embed_id: 'board' },
      { user_group_id: 'sealed-testing', embed_id: 'board', origin: 'https://app.example.com', properties: { v: 1 } },
      { user_group_id: 'sealed-testing', expires_in: 86_400 },
    ];
    const tokens = [];
    for (const body of bodies) tokens.push((await testing.mintEmbedToken(body)).embed_token);
    // A rotation of Testing's key, too: neither its old nor its new key is Customer's.
    await clientOf('Testing', 'admin').rotateSigningKey();
    tokens.push((await testing.mintEmbedToken({ user_group_id: 'sealed-testing', embed_id: 'board' })).embed_token);

    const audience = ['board', 'ugs-embed'];
    const customer = createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default`, audience, cooldownMs: 0 });
    const sealed = createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default/testing`, audience });
    for (const token of tokens) {
      await expect(customer(token)).rejects.toThrow();
      await expect(customer(token, { origin: 'https://app.example.com' })).rejects.toThrow();
      expect((await sealed(token)).ugs).toMatchObject({ environment: 'Testing', workspace: 'default' });
    }
  });

  it('refuses a token minted without an origin when the renderer passes one, unless told to allow it', async () => {
    await clientOf('Customer', 'admin').getOrCreateUserGroup({ user_group_id: 'sealed-origin' });
    const read = clientOf('Customer');
    const { embed_token: unpinned } = await read.mintEmbedToken({ user_group_id: 'sealed-origin' });
    const { embed_token: pinned } = await read.mintEmbedToken({
      user_group_id: 'sealed-origin',
      origin: 'https://app.example.com',
    });
    const issuer = `${baseUrl}/w/default`;
    const verify = createEmbedTokenVerifier({ issuer, audience: 'ugs-embed' });
    await expect(verify(unpinned, { origin: 'https://app.example.com' })).rejects.toBeInstanceOf(EmbedOriginError);
    expect((await verify(unpinned)).ugs.origin).toBeNull();
    expect((await verify(pinned, { origin: 'https://app.example.com' })).ugs.origin).toBe('https://app.example.com');

    const lenient = createEmbedTokenVerifier({ issuer, audience: 'ugs-embed', allowMissingOrigin: true });
    expect((await lenient(unpinned, { origin: 'https://app.example.com' })).sub).toBe('sealed-origin');
    await expect(lenient(pinned, { origin: 'https://evil.example.com' })).rejects.toBeInstanceOf(EmbedOriginError);
  });

  it('refuses the high-S twin of a token, always', async () => {
    await clientOf('Customer', 'admin').getOrCreateUserGroup({ user_group_id: 'sealed-s' });
    const verify = createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default`, audience: 'ugs-embed' });
    for (let i = 0; i < 8; i += 1) {
      const { embed_token: token } = await clientOf('Customer').mintEmbedToken({ user_group_id: 'sealed-s' });
      expect((await verify(token)).sub).toBe('sealed-s');
      await expect(verify(withOtherS(token))).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    }
  });
});
