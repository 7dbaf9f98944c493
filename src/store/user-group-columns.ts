import type { JsonObject } from '../domain/common.records.js';
import type { NewUserGroup } from '../domain/user-groups/user-group.records.js';
import { PATCHABLE_GROUP_COLUMNS } from '../domain/user-groups/user-group-patch.rules.js';
import type { AccessRule } from '../domain/access-rules/access-rules.rules.js';
import { patchParameters, serializeAccessRules, serializeProperties, type UserGroupRow } from './user-group-records.js';

/*
 * The one description of a user group's columns (user_groups): per column its record key, its SQL
 * name, PostgreSQL's type and each engine's encoding and decoding. Both engines build from it, once at
 * module load, their column lists (SELECT, RETURNING, INSERT), PostgreSQL's unnest arrays with their
 * types, the one-statement patch UPDATE and the row decoders; no engine file names a group's column
 * itself (test/store/user-group-columns.test.ts). A new column is one entry here, plus its migrations.
 *
 * The order is the one of every list built from it: PostgreSQL's SELECT list and the INSERT list
 * read it as written, SQLite's raw cells too.
 */

export type StoreEngine = 'postgres' | 'sqlite';

/** How a value crosses into an engine and back; absent: as it is. */
interface Coding {
  encode?: (value: never) => unknown;
  decode?: (value: never) => unknown;
}

export interface GroupColumn {
  /** The key of the record (NewUserGroup, UserGroupPatch, UserGroupRecord), parentTeamId for the link. */
  key: string;
  /** Its SQL name. */
  column: keyof UserGroupRow | 'parent_team_id';
  /** PostgreSQL's type, which its parameters are cast to; an array's elements too. */
  pgType: string;
  /** Read back with the group (the link is read as the ancestors). */
  read: boolean;
  /**
   * What an INSERT writes: the record's value, another key's (updated_at starts as created_at), an
   * engine's own expression (`engine`: the team id kept or drawn) or nothing (a default).
   */
  insert: 'value' | { from: string } | 'engine' | 'default';
  /** Written on every update whatever the patch, given each engine's cast of a parameter. */
  onUpdate?: (cast: (type: string) => string) => string;
  postgres?: Coding & {
    /** How a read selects it when not as the driver would decode it. */
    select?: (qualified: string) => string;
    /** A batch's array of it when PostgreSQL cannot take the value's own (an array of arrays). */
    array?: { type: string; encode: (value: never) => unknown; cell: (cell: string) => string };
  };
  sqlite?: Coding;
}

const parseJson = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
const numeric = { decode: (value: string | number) => Number(value) };
// node-postgres gives a timestamptz as a Date, whose ISO text is the one stored.
const pgTimestamp = { decode: (value: Date) => value.toISOString() };

export const USER_GROUP_COLUMNS: readonly GroupColumn[] = [
  { key: 'teamId', column: 'team_id', pgType: 'bigint', read: true, insert: 'engine', postgres: numeric },
  { key: 'workspaceId', column: 'workspace_id', pgType: 'bigint', read: true, insert: 'value', postgres: numeric },
  { key: 'environment', column: 'environment', pgType: 'text', read: true, insert: 'value' },
  { key: 'providedId', column: 'provided_id', pgType: 'text', read: true, insert: 'value' },
  { key: 'name', column: 'name', pgType: 'text', read: true, insert: 'value' },
  { key: 'tokenHash', column: 'token_hash', pgType: 'text', read: true, insert: 'value' },
  { key: 'tokenCiphertext', column: 'token_ciphertext', pgType: 'text', read: true, insert: 'value' },
  {
    key: 'properties',
    column: 'properties',
    pgType: 'json',
    read: true,
    insert: 'value',
    postgres: { encode: (value: JsonObject | null) => serializeProperties(value) },
    sqlite: {
      encode: (value: JsonObject | null) => serializeProperties(value),
      decode: (text: string | null) => parseJson<JsonObject>(text),
    },
  },
  { key: 'parentTeamId', column: 'parent_team_id', pgType: 'bigint', read: false, insert: 'value' },
  {
    key: 'isDemoGroup',
    column: 'is_demo_group',
    pgType: 'boolean',
    read: true,
    insert: 'value',
    sqlite: { encode: (value: boolean) => (value ? 1 : 0), decode: (value: number) => value === 1 },
  },
  {
    key: 'tags',
    column: 'tags',
    pgType: 'text[]',
    read: true,
    insert: 'value',
    postgres: {
      // A batch's tags are one JSON text per group: PostgreSQL takes no array of arrays of any length.
      array: {
        type: 'json',
        encode: (value: string[]) => JSON.stringify(value),
        cell: (cell) => `ARRAY(SELECT json_array_elements_text(${cell}))`,
      },
    },
    sqlite: {
      encode: (value: string[]) => JSON.stringify(value),
      // Most groups have none: skip the parser for the empty array.
      decode: (text: string) => (text === '[]' ? [] : (JSON.parse(text) as string[])),
    },
  },
  {
    key: 'accessRules',
    column: 'access_rules',
    pgType: 'json',
    read: true,
    insert: 'value',
    // Read as the stored text, not parsed by the driver: the decoder parses each distinct text once
    // and shares it (user-group-records.ts, accessRulesOf).
    postgres: {
      encode: (value: AccessRule[]) => serializeAccessRules(value),
      select: (qualified) => `${qualified}::text AS access_rules`,
    },
    sqlite: { encode: (value: AccessRule[]) => serializeAccessRules(value) },
  },
  {
    key: 'version',
    column: 'version',
    pgType: 'bigint',
    read: true,
    insert: 'default',
    onUpdate: () => 'version + 1',
  },
  {
    key: 'tokenGeneration',
    column: 'token_generation',
    pgType: 'bigint',
    read: true,
    insert: 'default',
    // A new token is a new generation: the embed tokens minted from the old one are revoked.
    onUpdate: (cast) => `token_generation + CASE WHEN @setTokenHash${cast('boolean')} THEN 1 ELSE 0 END`,
    postgres: numeric,
  },
  {
    key: 'createdAt',
    column: 'created_at',
    pgType: 'timestamptz',
    read: true,
    insert: 'value',
    postgres: pgTimestamp,
  },
  {
    key: 'updatedAt',
    column: 'updated_at',
    pgType: 'timestamptz',
    read: true,
    insert: { from: 'createdAt' },
    onUpdate: () => '@updatedAt',
    postgres: pgTimestamp,
  },
];

type ColumnKey =
  | 'teamId'
  | 'workspaceId'
  | 'environment'
  | 'providedId'
  | 'name'
  | 'tokenHash'
  | 'tokenCiphertext'
  | 'properties'
  | 'parentTeamId'
  | 'isDemoGroup'
  | 'tags'
  | 'accessRules'
  | 'version'
  | 'tokenGeneration'
  | 'createdAt'
  | 'updatedAt';

const byKey = new Map(USER_GROUP_COLUMNS.map((column) => [column.key, column]));

function described(key: string): GroupColumn {
  const column = byKey.get(key);
  if (column === undefined) throw new Error(`user_groups has no column for the key ${key}`);
  return column;
}

/**
 * Each column's SQL name by record key, for the statements that find, walk or filter by one (a WHERE
 * on an indexed key, a tree's walk up its links): they name it through this, never as text.
 */
export const GROUP_COLUMN = Object.fromEntries(USER_GROUP_COLUMNS.map((c) => [c.key, c.column])) as Record<
  ColumnKey,
  string
>;

const castOf = (engine: StoreEngine) => (type: string) => (engine === 'postgres' ? `::${type}` : '');

/** The columns a read brings back, in the order of the description (SQLite's raw cells follow it). */
export const READ_COLUMNS = USER_GROUP_COLUMNS.filter((column) => column.read);

/** A group's columns as a read selects them, of `table` when given. */
export function selectList(engine: StoreEngine, table?: string): string {
  return READ_COLUMNS.map(({ column, postgres }) => {
    const qualified = table === undefined ? column : `${table}.${column}`;
    return engine === 'postgres' && postgres?.select ? postgres.select(qualified) : qualified;
  }).join(', ');
}

const INSERTED = USER_GROUP_COLUMNS.filter((column) => column.insert !== 'default');

/** The column list of an INSERT of one group. */
export const INSERT_COLUMNS = INSERTED.map((column) => column.column).join(', ');

/**
 * The values of an INSERT of one group, as named parameters (`@key`, cast on PostgreSQL), in
 * INSERT_COLUMNS' order; `teamId` is the engine's expression for the team id, kept or drawn.
 */
export function insertValues(engine: StoreEngine, teamId: string): string {
  const cast = castOf(engine);
  return INSERTED.map((column) => {
    if (column.insert === 'engine') return teamId;
    const key = typeof column.insert === 'object' ? column.insert.from : column.key;
    return `@${key}${cast(described(key).pgType)}`;
  }).join(', ');
}

function encoded(engine: StoreEngine, column: GroupColumn, value: unknown): unknown {
  const encode = column[engine]?.encode as ((value: unknown) => unknown) | undefined;
  return encode === undefined || value === null || value === undefined ? value : encode(value);
}

/** An INSERT's parameters for one group (its team id and parent's as the engine decided them). */
export function insertParameters(
  engine: StoreEngine,
  group: NewUserGroup,
  parentTeamId: number | null,
): Record<string, unknown> {
  const values: Record<string, unknown> = { ...group.tenant, parentTeamId, teamId: group.teamId ?? null };
  for (const column of INSERTED) {
    if (column.insert !== 'value' || column.key in values) continue;
    values[column.key] = encoded(engine, column, group[column.key as keyof NewUserGroup]);
  }
  return values;
}

const set = (key: string) => `set${key.charAt(0).toUpperCase()}${key.slice(1)}`;

/**
 * The SET list of the one UPDATE for every shape of patch: a patchable column is written only when its
 * flag is set (`col = CASE WHEN @setKey THEN @key ELSE col END`), then those written on every update.
 */
export function patchAssignments(engine: StoreEngine): string {
  const cast = castOf(engine);
  const patched = USER_GROUP_COLUMNS.filter(({ key }) => (PATCHABLE_GROUP_COLUMNS as readonly string[]).includes(key));
  return [
    ...patched.map(
      ({ key, column, pgType }) =>
        `${column} = CASE WHEN @${set(key)}${cast('boolean')} THEN @${key}${cast(pgType)} ELSE ${column} END`,
    ),
    ...USER_GROUP_COLUMNS.flatMap(({ column, onUpdate }) => (onUpdate ? [`${column} = ${onUpdate(cast)}`] : [])),
  ].join(',\n      ');
}

/**
 * Named parameters for patchAssignments (user-group-records.ts, patchParameters): per patchable key,
 * its flag and its value in the engine's encoding.
 */
export function groupPatchParameters(engine: StoreEngine, patch: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const key of PATCHABLE_GROUP_COLUMNS) values[key] = encoded(engine, described(key), patch[key]);
  return patchParameters(PATCHABLE_GROUP_COLUMNS, values);
}

/** The parameter of a batch's array of a key: its plural. */
export const arrayParameter = (key: string) => (key.endsWith('s') ? key : key.endsWith('h') ? `${key}es` : `${key}s`);

/**
 * The new groups' columns of a multi-row PostgreSQL INSERT from unnest(…), in the description's order:
 * `arrays` the unnest arguments (typed array parameters), `aliases` its column names, `columns` the
 * INSERT list and `values(alias)` the SELECT list from the unnest's row. Keys in `given` are not
 * arrays but the expression given (the tenant of a run, a root's NULL parent); `teamId` is drawn.
 */
export function pgNewGroupArrays(given: Partial<Record<ColumnKey, string>>) {
  const columns = INSERTED.filter((column) => column.insert !== 'engine');
  const unnested = columns.filter(
    (column) => column.insert === 'value' && given[column.key as ColumnKey] === undefined,
  );
  return {
    arrays: unnested
      .map(({ key, pgType, postgres }) => `@${arrayParameter(key)}::${postgres?.array?.type ?? pgType}[]`)
      .join(', '),
    aliases: unnested.map((column) => column.column).join(', '),
    columns: columns.map((column) => column.column).join(', '),
    values: (alias: string) =>
      columns
        .map((column) => {
          const expression = given[column.key as ColumnKey];
          if (expression !== undefined) return expression;
          const source = typeof column.insert === 'object' ? described(column.insert.from) : column;
          const cell = `${alias}.${source.column}`;
          return source.postgres?.array ? source.postgres.array.cell(cell) : cell;
        })
        .join(', '),
  };
}

/** The arrays pgNewGroupArrays unnests, for `keys` (those it did not take as given), encoded. */
export function pgNewGroupParameters(groups: NewUserGroup[], keys: string[]): Record<string, unknown[]> {
  const parameters: Record<string, unknown[]> = {};
  for (const key of keys) {
    const column = described(key);
    const encode = (column.postgres?.array?.encode ?? column.postgres?.encode) as
      ((value: unknown) => unknown) | undefined;
    parameters[arrayParameter(key)] = groups.map((group) => {
      const value =
        key in group.tenant ? group.tenant[key as keyof NewUserGroup['tenant']] : group[key as keyof NewUserGroup];
      return encode === undefined || value === null ? value : encode(value);
    });
  }
  return parameters;
}

/** The keys a batch of new groups sends as arrays, given those it does not. */
export function pgNewGroupKeys(given: Partial<Record<ColumnKey, string>>): string[] {
  return INSERTED.filter((column) => column.insert === 'value' && given[column.key as ColumnKey] === undefined).map(
    (column) => column.key,
  );
}

/**
 * A PostgreSQL patch of many rows from unnest(…) for `keys` (each flagged as patchAssignments does):
 * the SET list against `table`, the unnest arguments and aliases, and the parameters of the patches.
 */
export function pgPatchArrays(keys: ColumnKey[], table: string, alias: string) {
  const columns = keys.map(described);
  return {
    assignments: columns
      .map(({ column, postgres }) => {
        const cell = `${alias}.${column}`;
        return `${column} = CASE WHEN ${alias}.set_${column} THEN ${postgres?.array ? postgres.array.cell(cell) : cell} ELSE ${table}.${column} END`;
      })
      .join(',\n      '),
    arrays: columns
      .map(
        ({ key, pgType, postgres }) =>
          `@${arrayParameter(set(key))}::boolean[], @${arrayParameter(key)}::${postgres?.array?.type ?? pgType}[]`,
      )
      .join(', '),
    aliases: columns.map(({ column }) => `set_${column}, ${column}`).join(', '),
    parameters: (patches: readonly object[]) =>
      Object.fromEntries(
        columns.flatMap((column) => {
          const encode = (column.postgres?.array?.encode ?? column.postgres?.encode) as
            ((value: unknown) => unknown) | undefined;
          return [
            [
              arrayParameter(set(column.key)),
              patches.map((patch) => (patch as Record<string, unknown>)[column.key] !== undefined),
            ],
            [
              arrayParameter(column.key),
              patches.map((patch) => {
                const value = (patch as Record<string, unknown>)[column.key];
                return value === undefined ? null : encode === undefined || value === null ? value : encode(value);
              }),
            ],
          ];
        }),
      ),
  };
}

type Decoder = [column: string, decode: ((value: never) => unknown) | undefined];
const decoders = (engine: StoreEngine): Decoder[] =>
  READ_COLUMNS.map((column) => [column.column, column[engine]?.decode]);
const PG_DECODERS = decoders('postgres');
const SQLITE_DECODERS = decoders('sqlite');

/** A group's columns, as the engine-neutral row, from a PostgreSQL row (by column name). */
export function columnsFromPostgres(row: Record<string, unknown>): Omit<UserGroupRow, 'mapping' | 'ancestors'> {
  const decoded: Record<string, unknown> = {};
  for (const [column, decode] of PG_DECODERS) {
    const value = row[column];
    decoded[column] = decode === undefined ? value : (decode as (value: unknown) => unknown)(value);
  }
  return decoded as Omit<UserGroupRow, 'mapping' | 'ancestors'>;
}

/** A group's columns, as the engine-neutral row, from SQLite's raw cells (READ_COLUMNS' order first). */
export function columnsFromSqlite(cells: unknown[]): Omit<UserGroupRow, 'mapping' | 'ancestors'> {
  const decoded: Record<string, unknown> = {};
  for (let index = 0; index < SQLITE_DECODERS.length; index++) {
    const [column, decode] = SQLITE_DECODERS[index]!;
    const value = cells[index];
    decoded[column] = decode === undefined ? value : (decode as (value: unknown) => unknown)(value);
  }
  return decoded as Omit<UserGroupRow, 'mapping' | 'ancestors'>;
}
