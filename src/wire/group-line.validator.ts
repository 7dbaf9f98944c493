import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { AppError } from '../domain/errors.js';
import { validationError } from './validation-errors.js';

/** One group line's check against its schema, and the refusal of a line that fails it. */
export interface GroupLineValidator<Schema extends TSchema> {
  check(value: unknown): value is Static<Schema>;
  /** The first violation of a line that fails `check`, worded as the API words a refusal of its request schema. */
  firstError(value: unknown): AppError;
}

/**
 * The one validator of the group lines an import and a sync read, over HTTP and from the CLI: the
 * same rules as the API's request schemas, compiled on first use (compiling costs some 200 ms,
 * which every `ugs` command and server start would otherwise pay whether or not it reads lines).
 */
export function groupLineValidator<Schema extends TSchema>(schema: Schema): GroupLineValidator<Schema> {
  const compile = () => Compile(schema as TSchema);
  let compiled: ReturnType<typeof compile> | undefined;
  const validator = () => (compiled ??= compile());
  return {
    check: (value): value is Static<Schema> => validator().Check(value),
    firstError: (value) => {
      // TypeBox lists a root-level problem after the nested "schema is false" entries it causes;
      // report it first, as the API would.
      const errors = [...validator().Errors(value)].filter((error) => error.keyword !== 'boolean').map(asAjvError);
      errors.sort((a, b) => Number(b.instancePath === '') - Number(a.instancePath === ''));
      return validationError(errors, 'line', schema);
    },
  };
}

/** TypeBox names all missing or extra properties at once; Ajv (whose shape the API's wording reads) names one. */
function asAjvError<E extends { keyword: string; params: object }>(error: E): E {
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  if (error.keyword === 'required') return { ...error, params: { missingProperty: params.requiredProperties?.[0] } };
  if (error.keyword === 'additionalProperties')
    return { ...error, params: { additionalProperty: params.additionalProperties?.[0] } };
  return error;
}
