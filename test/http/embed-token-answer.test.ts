// A mint's answer is written by a serialiser of its own (src/wire/embed-token.presenter.ts), not by Fastify's
// from EmbedTokenResponse. This checks the two agree: for every shape the answer can take (each
// optional field present or absent), the text is JSON that carries exactly the schema's fields with
// the values given, and that the schema accepts. A field the schema gains and the serialiser does not
// write fails here.
import { describe, expect, it } from 'vitest';
import { Check } from 'typebox/value';
import { EmbedTokenResponse } from '../../src/wire/embed-tokens.schemas.js';
import { serializeEmbedTokenAnswer, type EmbedTokenAnswer } from '../../src/wire/embed-token.presenter.js';

/** A value of the kind the schema's field takes, as the service makes them (a JWS, ISO 8601 times). */
function sampleOf(field: string, schema: { type?: string; format?: string; const?: unknown }): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.type === 'string' && schema.format === 'date-time') return '2026-11-29T10:00:00.000Z';
  if (schema.type === 'string') return 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhY21lIn0.c2lnbmF0dXJlLV8';
  throw new Error(
    `EmbedTokenResponse.${field} is of a kind this test cannot sample: extend sampleOf and the serialiser`,
  );
}

const properties = EmbedTokenResponse.properties as Record<string, { type?: string; format?: string; const?: unknown }>;
const required = new Set<string>(EmbedTokenResponse.required ?? []);
const optional = Object.keys(properties).filter((field) => !required.has(field));

/** Every answer shape: the required fields with each subset of the optional ones. */
const shapes: Array<Record<string, unknown>> = Array.from({ length: 2 ** optional.length }, (_, mask) =>
  Object.fromEntries(
    Object.keys(properties)
      .filter((field) => required.has(field) || (mask >> optional.indexOf(field)) % 2 === 1)
      .map((field) => [field, sampleOf(field, properties[field]!)]),
  ),
);

describe('the embed-token answer serialiser against EmbedTokenResponse', () => {
  it('has an optional field to vary (session_ends_at), so the shapes below cover more than one', () => {
    expect(optional).toContain('session_ends_at');
    expect(shapes.length).toBe(2 ** optional.length);
  });

  for (const shape of shapes) {
    it(`writes exactly the schema's fields, with their values, for ${Object.keys(shape).join(', ')}`, () => {
      const { success: _success, ...answer } = shape;
      const text = serializeEmbedTokenAnswer(answer as unknown as EmbedTokenAnswer);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(parsed).toEqual(shape);
      expect(Object.keys(parsed)).toEqual(Object.keys(shape));
      expect(Check(EmbedTokenResponse, parsed)).toBe(true);
    });
  }

  it('writes nothing the schema does not name, and leaves an absent optional field out rather than null', () => {
    const text = serializeEmbedTokenAnswer({
      embed_token: 'a.b.c',
      expires_at: '2026-11-29T10:00:00.000Z',
      session_ends_at: undefined,
    });
    expect(JSON.parse(text)).toEqual({ success: 1, embed_token: 'a.b.c', expires_at: '2026-11-29T10:00:00.000Z' });
  });
});
