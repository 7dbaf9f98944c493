// How long a retired embed-token signing key stays published (src/domain/signing-keys/signing-keys.rules.ts):
// a day, the longest lifetime of a token, after the last moment an instance may still sign with it,
// which is its retirement plus the bound for which instances hold the current key in memory; and
// what a rotation may do to the published keys.
import { describe, expect, it } from 'vitest';
import {
  isPublished,
  planSigningKeyRotation,
  publishedSince,
  publishedUntil,
} from '../../src/domain/signing-keys/signing-keys.rules.js';
import { CURRENT_KEY_HELD_MS } from '../../src/domain/signing-keys/signing-keys.service.js';
import type { SigningKeyRecord } from '../../src/domain/signing-keys/signing-key.records.js';
import { MAX_PUBLISHED_KEYS } from '../../src/wire/contract.constants.js';

const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const retiredAt = (ms: number | null) => ({ retiredAt: ms === null ? null : at(ms) });

describe('publication of a retired signing key', () => {
  it('lasts a day plus the bound on signing with a held key after its retirement; the current key has no end', () => {
    expect(CURRENT_KEY_HELD_MS).toBe(5_000);
    expect(publishedUntil(retiredAt(0), CURRENT_KEY_HELD_MS)).toBe(at(DAY_MS + 5_000));
    expect(publishedUntil(retiredAt(0), 250)).toBe(at(DAY_MS + 250));
    expect(publishedUntil(retiredAt(null), CURRENT_KEY_HELD_MS)).toBeNull();
    expect(isPublished(retiredAt(null), at(10 * DAY_MS), CURRENT_KEY_HELD_MS)).toBe(true);
  });

  it('covers a token another instance signed with the key just before the bound ran out, until that token expires', () => {
    // Signed 4.9 s after the retirement with a day's lifetime: it expires a day and 4.9 s after it.
    const tokenExpiry = DAY_MS + 4_900;
    expect(isPublished(retiredAt(0), at(tokenExpiry - 1), CURRENT_KEY_HELD_MS)).toBe(true);
    // The day alone (no key held) would have dropped the key while that token was still live.
    expect(isPublished(retiredAt(0), at(tokenExpiry - 1), 0)).toBe(false);
    expect(isPublished(retiredAt(0), at(DAY_MS + 4_999), CURRENT_KEY_HELD_MS)).toBe(true);
    expect(isPublished(retiredAt(0), at(DAY_MS + 5_000), CURRENT_KEY_HELD_MS)).toBe(false);
  });

  it('publishedSince, the bound of the listing, the JWKS and the key limit, agrees with isPublished', () => {
    const now = at(DAY_MS + 5_000);
    expect(publishedSince(now, CURRENT_KEY_HELD_MS)).toBe(at(0));
    // Keys retired after publishedSince are published; the one retired at it just left.
    expect(isPublished(retiredAt(1), now, CURRENT_KEY_HELD_MS)).toBe(true);
    expect(isPublished(retiredAt(0), now, CURRENT_KEY_HELD_MS)).toBe(false);
  });
});

describe('a rotation against the published-key limit', () => {
  const key = (index: number): SigningKeyRecord => ({
    id: index,
    workspaceId: 1,
    environment: 'Customer',
    kid: `kid-${index}`,
    publicJwk: {},
    privateKeyCiphertext: '',
    createdAt: at(index),
    retiredAt: index === 0 ? null : at(index),
  });
  // Newest (the current one) first, as the store reads them.
  const published = (count: number) => Array.from({ length: count }, (_, index) => key(index));

  it('drops nothing below the limit, is refused at it, and when forced drops the oldest, never the current key nor the one it just retired', () => {
    expect(planSigningKeyRotation(published(MAX_PUBLISHED_KEYS - 1), false)).toEqual({ drop: [] });
    expect(planSigningKeyRotation(published(MAX_PUBLISHED_KEYS), false)).toEqual({
      refused: { published: MAX_PUBLISHED_KEYS },
    });
    const forced = planSigningKeyRotation(published(MAX_PUBLISHED_KEYS + 2), true);
    expect(forced).toEqual({ drop: published(MAX_PUBLISHED_KEYS + 2).slice(-3) });
    expect('drop' in forced && forced.drop.map((dropped) => dropped.kid)).not.toContain('kid-0');
    expect('drop' in forced && forced.drop.map((dropped) => dropped.kid)).not.toContain('kid-1');
  });
});
