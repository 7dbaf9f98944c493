import { Type, type Static, type TObject, type TOptional } from 'typebox';
import { Count, MAX_SAFE } from './common.schemas.js';
import { CARRIED_FIELDS, LACKING_LISTED, MAX_SYNC_GROUPS } from './contract.constants.js';
import { Success } from './envelope.js';
import { TransferredUserGroupLine } from './user-groups.schemas.js';

const TrueOrFalse = (description: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }));

export const ImportQuery = Type.Object(
  {
    dry_run: TrueOrFalse('true: check every line and answer the summary the import would give, writing nothing.'),
    replace_tokens: TrueOrFalse(
      "true: a line whose token differs from its group's current token replaces it, as a rotation (audited and announced as user_group.token_rotated). Otherwise such a line is refused: an old export never puts back a token that was rotated away.",
    ),
    require_fields: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: `Comma-separated, some of ${CARRIED_FIELDS.join(', ')}: a line lacking any of them is refused rather than imported (\`ugs groups import --require-fields\`). An unknown name is a 400.`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ImportQuery = Static<typeof ImportQuery>;

const ImportRejection = Type.Object({
  line: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_SAFE, description: 'NDJSON: the line (from 1) of the refused group.' }),
  ),
  index: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_SAFE,
      description: 'A JSON array: the index (from 0) of the refused group.',
    }),
  ),
  reason: Type.String({ description: "Why the line was refused: one sentence, never the line's token." }),
});

const CarriedFieldName = Type.Enum(CARRIED_FIELDS, {
  description: 'A field this service keeps that an export may lack.',
});

const LackingLine = Type.Object({
  line: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAFE, description: 'NDJSON: the line (from 1).' })),
  index: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_SAFE, description: 'A JSON array: the index (from 0).' }),
  ),
  provided_id: Type.String(),
  fields: Type.Array(CarriedFieldName, {
    description: 'What the line lacked: the group keeps what it had here, or the default.',
  }),
});

export const ImportResponse = Type.Object({
  success: Success,
  import: Type.Object({
    dry_run: Type.Boolean(),
    created: Count,
    updated: Count,
    unchanged: Count,
    rejected: Type.Array(ImportRejection, {
      description: 'The refused lines in body order; each refused line wrote nothing, the others were written.',
    }),
    lacking: Type.Array(LackingLine, {
      description: `The lines that lacked a field this service keeps, in body order: the first ${LACKING_LISTED}, as the CLI lists them.`,
    }),
    lacking_lines: Type.Integer({
      minimum: 0,
      maximum: MAX_SAFE,
      description: 'How many lines lacked a field (imported all the same, unless require_fields names it).',
    }),
    lacking_fields: Type.Object(
      Object.fromEntries(
        CARRIED_FIELDS.map((field) => [field, Type.Optional(Type.Object({ lacked: Count }))]),
      ) as Record<(typeof CARRIED_FIELDS)[number], TOptional<TObject<{ lacked: typeof Count }>>>,
      { description: 'Per field, how many of the imported lines lacked it.' },
    ),
  }),
});
export type ImportResponse = Static<typeof ImportResponse>;

/** The body as the document describes it: the lines of `ugs groups import`, as a JSON array or NDJSON. */
export const ImportBody = Type.Array(TransferredUserGroupLine, {
  maxItems: MAX_SYNC_GROUPS,
  description: `At most ${MAX_SYNC_GROUPS} groups, each as a line of an export (or a whole get-or-create response of the hosted product): a JSON array, or NDJSON (one object per line, Content-Type application/x-ndjson).`,
});
