import { Type, type TSchema } from 'typebox';

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(0),
    error: Type.Object({
      code: Type.String({ description: 'Stable snake_case error code.' }),
      message: Type.String({ description: 'One human sentence.' }),
      field: Type.Optional(Type.String({ description: 'The request field at fault, when one is.' })),
      line: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'A sync: the NDJSON line (from 1) of the group at fault, when one is.',
        }),
      ),
      index: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'A sync: the array index (from 0) of the group at fault, when one is.',
        }),
      ),
      request_id: Type.String(),
    }),
  },
  { description: 'Failure envelope.' },
);

/** Response schemas of a route: the success shape plus the failure envelope for every error status. */
export function responses<S extends TSchema>(success: S) {
  return { 200: success, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope } as const;
}

export const Success = Type.Literal(1);
