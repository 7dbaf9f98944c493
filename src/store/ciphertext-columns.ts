import { CIPHERTEXT_KINDS, type CiphertextKind } from '../domain/encryption-keys/ciphertext.records.js';
import { CIPHERTEXT_KEY_ID_SPAN } from '../domain/secrets.js';
import { GROUP_COLUMN } from './user-group-columns.js';

/**
 * Where each kind of ciphertext lives, for both engines: key rotation walks these. A new encrypted
 * column joins rotation by being listed here (and in CIPHERTEXT_KINDS); its table needs an integer
 * key to page by.
 */
export const CIPHERTEXT_COLUMNS: Record<
  CiphertextKind,
  { table: string; id: string; column: string; lookupHash?: string }
> = {
  // A hosted token's keyed hash is made under its ciphertext's key, so a re-encryption rewrites it too.
  user_group_token: {
    table: 'user_groups',
    id: 'team_id',
    column: GROUP_COLUMN.tokenCiphertext,
    lookupHash: 'token_hash',
  },
  // Responses kept for safe retries; NULL while the request is still running (then nothing to rotate).
  idempotent_response: { table: 'idempotency_keys', id: 'id', column: 'response' },
  // The private halves of the workspaces' embed-token signing keys.
  signing_key: { table: 'signing_keys', id: 'id', column: 'private_key_ciphertext' },
  // Webhook signing secrets, and for a day after a rotation the secret that still signs beside it.
  webhook_secret: { table: 'webhook_endpoints', id: 'id', column: 'secret_ciphertext' },
  webhook_previous_secret: { table: 'webhook_endpoints', id: 'id', column: 'previous_secret_ciphertext' },
};

/** The `SET` part that writes a replacement's keyed lookup hash (`value`, an SQL expression) where its kind has one. */
export const lookupHashSet = ({ lookupHash }: (typeof CIPHERTEXT_COLUMNS)[CiphertextKind], value: string) =>
  lookupHash ? `, ${lookupHash} = coalesce(${value}, ${lookupHash})` : '';

/** The key id inside a ciphertext, where the cipher puts it; the same SQL on SQLite and PostgreSQL. */
export const keyIdOf = (column: string) =>
  `substr(${column}, ${CIPHERTEXT_KEY_ID_SPAN.start}, ${CIPHERTEXT_KEY_ID_SPAN.length})`;

/** One statement of each kind, built from its column: `build(kind, columns)`. */
export function perKind<S>(
  build: (columns: (typeof CIPHERTEXT_COLUMNS)[CiphertextKind]) => S,
): Record<CiphertextKind, S> {
  return Object.fromEntries(CIPHERTEXT_KINDS.map((kind) => [kind, build(CIPHERTEXT_COLUMNS[kind])])) as Record<
    CiphertextKind,
    S
  >;
}

/** Selects `kind`, `key_id` and `count` for every kind and key id, over all the ciphertext columns. */
export const COUNT_BY_KEY = CIPHERTEXT_KINDS.map((kind) => {
  const { table, column } = CIPHERTEXT_COLUMNS[kind];
  return `SELECT '${kind}' AS kind, ${keyIdOf(column)} AS key_id, count(*) AS count FROM ${table}
    WHERE ${column} IS NOT NULL GROUP BY ${keyIdOf(column)}`;
}).join('\nUNION ALL\n');

/** The rows of `kind` with an id above a bound whose ciphertext is not under a key id, in id order. */
export const listNotUnderKey = ({ table, id, column }: (typeof CIPHERTEXT_COLUMNS)[CiphertextKind]) =>
  `SELECT ${id} AS id, ${column} AS ciphertext FROM ${table}
    WHERE ${id} > @afterId AND ${keyIdOf(column)} <> @keyId ORDER BY ${id} LIMIT @limit`;
