// The two implementations behind `#crypto` (node:crypto for Node, WebCrypto for browsers) answer
// alike: RFC 4231's HMAC-SHA256 test case, a changed signature or key refused, and v4 UUIDs. WebCrypto
// runs here as Node's global `crypto`, the same API a browser has. Likewise ES256 (P-256, r ‖ s): a
// signature verifies under its key and nothing else, and base64url decodes alike.
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as node from '../src/crypto/node.js';
import * as web from '../src/crypto/web.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

// RFC 4231, test case 2.
const KEY = bytes('Jefe');
const MESSAGE = bytes('what do ya want for nothing?');
const MAC = hex('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');

const es256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
const publicJwk = es256.publicKey.export({ format: 'jwk' }) as { x: string; y: string };
const SIGNING_INPUT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0';
const SIGNATURE = new Uint8Array(
  sign('sha256', Buffer.from(SIGNING_INPUT), { key: es256.privateKey, dsaEncoding: 'ieee-p1363' }),
);

describe.each([
  ['node:crypto', node],
  ['WebCrypto', web],
])('%s', (_name, implementation) => {
  it("verifies RFC 4231's HMAC-SHA256 and refuses anything else", async () => {
    expect(await implementation.hmacSha256Verifies(KEY, MESSAGE, MAC)).toBe(true);
    const changed = MAC.slice();
    changed[0] = changed[0]! ^ 1;
    expect(await implementation.hmacSha256Verifies(KEY, MESSAGE, changed)).toBe(false);
    expect(await implementation.hmacSha256Verifies(bytes('Jeff'), MESSAGE, MAC)).toBe(false);
    expect(await implementation.hmacSha256Verifies(KEY, MESSAGE, MAC.slice(0, 16))).toBe(false);
    expect(createHmac('sha256', KEY).update(MESSAGE).digest().equals(Buffer.from(MAC))).toBe(true);
  });

  it('makes distinct version 4 UUIDs', () => {
    const ids = new Set(Array.from({ length: 100 }, () => implementation.randomId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('verifies an ES256 signature under its key only, and refuses any change to it or to what it signs', async () => {
    const verify = await implementation.prepareEs256Verifier(publicJwk);
    expect(await verify(SIGNING_INPUT, SIGNATURE)).toBe(true);
    const changed = SIGNATURE.slice();
    changed[63] = changed[63]! ^ 1;
    expect(await verify(SIGNING_INPUT, changed)).toBe(false);
    expect(await verify(`${SIGNING_INPUT}x`, SIGNATURE)).toBe(false);
    expect(await verify(SIGNING_INPUT, SIGNATURE.slice(0, 63))).toBe(false);
    const other = await implementation.prepareEs256Verifier(otherKey as { x: string; y: string });
    expect(await other(SIGNING_INPUT, SIGNATURE)).toBe(false);
    await expect(implementation.prepareEs256Verifier({ x: publicJwk.y, y: publicJwk.x })).rejects.toThrow();
  });

  it("verifies the signing input's UTF-8, so a character outside ASCII never stands for its low byte; any length", async () => {
    const verify = await implementation.prepareEs256Verifier(publicJwk);
    // 'Ŋ' is U+014A: cut to one byte (Latin-1) it would be 0x4A, the 'J' the signature is of.
    const spelt = SIGNING_INPUT.replace('J', 'Ŋ');
    expect(Buffer.from(spelt, 'latin1')).toEqual(Buffer.from(SIGNING_INPUT));
    expect(await verify(spelt, SIGNATURE)).toBe(false);
    for (const input of [`${SIGNING_INPUT}.é☃`, `${SIGNING_INPUT}.${'x'.repeat(30_000)}`, `${'☃'.repeat(8193)}`]) {
      const signature = sign('sha256', Buffer.from(input, 'utf8'), {
        key: es256.privateKey,
        dsaEncoding: 'ieee-p1363',
      });
      expect(await verify(input, new Uint8Array(signature))).toBe(true);
      expect(await verify(`${input}x`, new Uint8Array(signature))).toBe(false);
    }
  });

  it('decodes base64url as Buffer does, to bytes and to UTF-8 text', () => {
    for (const bytes of [SIGNATURE, MAC, new Uint8Array([0xfb, 0xff, 0xfe])]) {
      const text = Buffer.from(bytes).toString('base64url');
      expect(Buffer.from(implementation.base64urlBytes(text))).toEqual(Buffer.from(bytes));
      expect(implementation.base64urlText(text)).toBe(Buffer.from(bytes).toString('utf8'));
    }
    const json = '{"sub":"équipe-☃","n":[1,2]}';
    expect(implementation.base64urlText(Buffer.from(json).toString('base64url'))).toBe(json);
    // Longer than any token, and one after another (each answer its own string).
    const long = JSON.stringify({ text: 'é☃'.repeat(20_000) });
    const decoded = [long, json].map((text) => implementation.base64urlText(Buffer.from(text).toString('base64url')));
    expect(decoded).toEqual([long, json]);
  });
});
