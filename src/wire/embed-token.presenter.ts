import type { Static } from 'typebox';
import type { EmbedTokenResponse } from './embed-tokens.schemas.js';

/** A mint's answer in its wire shape (EmbedTokenResponse), without the envelope's `success`. */
export type EmbedTokenAnswer = Omit<Static<typeof EmbedTokenResponse>, 'success'>;

/**
 * EmbedTokenResponse as JSON text, written out: a JWS is base64url and dots and the times are ISO 8601,
 * nothing to escape, where Fastify's serialiser would copy and scan a token that access rules make up
 * to 8 KiB (docs/performance-history.md). Its input is the schema's own type, so a field the schema adds
 * is a compile error at the route, and test/http/embed-token-answer.test.ts checks that the text
 * carries every field of the schema, and nothing else, for every shape it can take.
 */
export function serializeEmbedTokenAnswer(answer: EmbedTokenAnswer): string {
  const session = answer.session_ends_at === undefined ? '' : `,"session_ends_at":"${answer.session_ends_at}"`;
  return `{"success":1,"embed_token":"${answer.embed_token}","expires_at":"${answer.expires_at}"${session}}`;
}
