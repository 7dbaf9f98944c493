// The two implementations behind `#crypto` (node:crypto for Node, WebCrypto for browsers) answer
// alike: RFC 4231's HMAC-SHA256 test case, a changed signature or key refused, and v4 UUIDs. WebCrypto
// runs here as Node's global `crypto`, the same API a browser has.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as node from '../src/crypto/node.js';
import * as web from '../src/crypto/web.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

// RFC 4231, test case 2.
const KEY = bytes('Jefe');
const MESSAGE = bytes('what do ya want for nothing?');
const MAC = hex('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');

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
});
