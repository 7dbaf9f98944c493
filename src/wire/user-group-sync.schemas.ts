import { Type, type Static } from 'typebox';
import { AccessRulesInput } from './access-rules.schemas.js';
import { Count, EnvironmentTag, IssuedId, MAX_SAFE, Tag, Text256 } from './common.schemas.js';
import { MAX_SYNC_GROUPS } from './contract.constants.js';
import { Success } from './envelope.js';
import {
  ID_RULE,
  IsDemoGroup,
  Mapping,
  MAPPING_RULE,
  NAME_RULE,
  ParentUserGroupId,
  Properties,
  Tags,
  UserGroupIdentifier,
} from './user-groups.schemas.js';

/** A sync's body limit, its own (docs/api.md#sync-tenants-as-code): the 1 MiB of every other route would hold a few hundred groups. */
export const SYNC_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * One group of a sync's desired state (docs/api.md#sync-tenants-as-code): a line of NDJSON or an item of a JSON array. A field
 * left out keeps the group's value; null clears it. No token: a created group gets one as usual.
 */
export const SyncUserGroupLine = Type.Object(
  {
    user_group_id: UserGroupIdentifier(ID_RULE),
    name: Type.Optional(Text256(NAME_RULE)),
    parent_user_group_id: Type.Optional(ParentUserGroupId),
    properties: Type.Optional(Properties),
    mapping: Type.Optional(Type.Union([Mapping, Type.Null()], { description: `${MAPPING_RULE} null clears it.` })),
    tags: Type.Optional(
      Type.Union([Tags, Type.Null()], { description: 'The tags, replaced whole; null clears them.' }),
    ),
    is_demo_group: Type.Optional(
      Type.Union([IsDemoGroup, Type.Null()], { description: 'A demo group; null: back to false.' }),
    ),
    access_rules: Type.Optional(AccessRulesInput),
  },
  { additionalProperties: false },
);
export type SyncUserGroupLine = Static<typeof SyncUserGroupLine>;

/** The JSON form of a sync's body; NDJSON (application/x-ndjson) carries the same objects one per line. */
export const SyncBody = Type.Array(SyncUserGroupLine, {
  maxItems: MAX_SYNC_GROUPS,
  description: `The desired state of at most ${MAX_SYNC_GROUPS} groups: a JSON array, or NDJSON (one object per line, Content-Type application/x-ndjson).`,
});

export const SyncQuery = Type.Object(
  {
    environment: Type.Optional(EnvironmentTag),
    dry_run: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: 'true: answer the plan and change nothing.',
      }),
    ),
    prune: Type.Optional(
      Tag(
        'A tag: also delete the groups carrying it that the file leaves out (never any other group); refused when that would delete the parent of a group that stays.',
      ),
    ),
  },
  { additionalProperties: false },
);

const Position = {
  line: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_SAFE, description: 'The NDJSON line (from 1) of the group.' }),
  ),
  index: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_SAFE, description: 'The array index (from 0) of the group.' }),
  ),
};

export const SyncPlanItem = Type.Object({
  action: Type.Union([
    Type.Literal('create'),
    Type.Literal('update'),
    Type.Literal('unchanged'),
    Type.Literal('delete'),
  ]),
  user_group_id: Type.String({ description: 'The provided id of the group.' }),
  team_id: Type.Union([IssuedId, Type.Null()], { description: 'Null for a group the plan creates.' }),
  ...Position,
  changes: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'update: the changed fields, each {before, after}; create and delete: every field set. Never a token.',
      },
    ),
  ),
});

export const SyncResponse = Type.Object({
  success: Success,
  sync: Type.Object({
    id: Type.String({ description: 'sync_…: the audit and webhook events of the apply carry it as sync_id.' }),
    dry_run: Type.Boolean(),
    applied: Type.Boolean({ description: 'Whether anything was written: false for a dry run or a plan of nothing.' }),
    summary: Type.Object({
      create: Count,
      update: Count,
      unchanged: Count,
      delete: Count,
    }),
    plan: Type.Array(SyncPlanItem, { description: 'One entry per group: the file order, then the deletes.' }),
  }),
});
export type SyncResponse = Static<typeof SyncResponse>;
