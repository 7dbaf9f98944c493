import type { PublishedKey } from '../domain/signing-keys/signing-keys.service.js';

/** A signing key as the API shows it: its kid and dates, never key material. */
export const toSigningKey = (key: Pick<PublishedKey, 'kid' | 'createdAt' | 'retiredAt' | 'publishedUntil'>) => ({
  kid: key.kid,
  created_at: key.createdAt,
  retired_at: key.retiredAt,
  published_until: key.publishedUntil,
});
