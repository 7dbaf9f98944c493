import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type pg from 'pg';
import { MIGRATION_RECORD_TABLES } from '../../src/store/migration.js';
import { POSTGRES_URL, schemaUrl, withPostgresClient } from './test-database.js';

const run = promisify(execFile);

/**
 * Columns a copy stamps with its own time rather than the template's: the migration records'
 * applied_at, as the steps of a schema migrated for the test would be stamped (the store reports
 * one of them, when low-S signing began, as a time).
 */
const STAMPED_NOW: Record<string, string> = Object.fromEntries(
  MIGRATION_RECORD_TABLES.map((table) => [table, 'applied_at']),
);

export interface ClonedSchema {
  schema: string;
  /** The test database's URL with search_path set to the clone. */
  url: string;
  /** Drops the copy (in the background: SchemaTemplate.close waits for it). */
  drop(): Promise<void>;
}

/**
 * A PostgreSQL schema captured once (e.g. migrated, or migrated and seeded, through the production
 * code path), copied per test instead of migrating again: its DDL as pg_dump writes it, replayed under
 * another name, then its rows and its sequences' positions. Migrating is most of a store test's time
 * on PostgreSQL (twenty steps, one transaction each, two concurrent index builds that wait for every
 * transaction open in the database); a copy is one script of plain DDL and INSERT … SELECT. The
 * template schema must stay as it was captured while copies are made.
 */
export interface SchemaTemplate {
  /** A new schema of a name of its own, holding what the template held. */
  clone(): Promise<ClonedSchema>;
  /** Fills `schema`, which exists and is empty, with what the template held. */
  fill(schema: string): Promise<void>;
  /** Drops the copy made ahead for the next clone() and waits for the copies being dropped. */
  close(): Promise<void>;
}

export interface CopyOptions {
  /** Names copies `<template>_<random>` instead of `t_<random>`, so that whoever drops the template can find them. */
  namedAfterTemplate?: boolean;
  /**
   * Ends each copy with ANALYZE of its tables, as a start that migrated does (refreshStatistics): the
   * planner then prices a copy's statements as it would a migrated schema's.
   */
  analysed?: boolean;
}

/** Reads the template's DDL, its tables in foreign-key order with their columns, and its sequences. */
export async function captureSchemaTemplate(
  template: string,
  baseUrl = POSTGRES_URL,
  options: CopyOptions = {},
): Promise<SchemaTemplate> {
  // pg_dump connects with the URL's own parameters; the template is named, so search_path is not needed.
  const dumpUrl = new URL(baseUrl);
  dumpUrl.searchParams.delete('options');
  const { stdout } = await run(
    'pg_dump',
    ['--schema-only', `--schema=${template}`, '--no-owner', '--no-privileges', dumpUrl.toString()],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const name = new RegExp(`\\b${template}\\b`, 'g');
  // psql's meta-commands (\restrict, \unrestrict) are not SQL; the schema itself is made by clone().
  const ddl = stdout
    .split('\n')
    .filter((line) => !line.startsWith('\\') && line !== `CREATE SCHEMA ${template};`)
    .join('\n');

  const { tables, sequences } = await withPostgresClient(async (client) => {
    const tables = await tablesInForeignKeyOrder(client, template);
    const names = (
      await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname`,
        [template],
      )
    ).rows;
    const sequences: { name: string; lastValue: string; isCalled: boolean }[] = [];
    for (const { name: sequence } of names) {
      const [position] = (
        await client.query<{ last_value: string; is_called: boolean }>(
          `SELECT last_value::text, is_called FROM ${template}.${sequence}`,
        )
      ).rows;
      sequences.push({ name: sequence, lastValue: position!.last_value, isCalled: position!.is_called });
    }
    return { tables, sequences };
  }, baseUrl);

  const scriptFor = (schema: string) =>
    [
      ddl.replace(name, schema),
      // Rows after the indexes, as a migrated schema gets them: tables whose indexes were built empty
      // keep the "never analysed" statistics (reltuples -1) that seeding a migrated schema leaves.
      ...tables
        .filter((table) => table.rows)
        .map(({ table, columns }) => {
          const selected = columns
            .split(', ')
            .map((column) => (column === STAMPED_NOW[table] ? 'now()' : column))
            .join(', ');
          return `INSERT INTO ${schema}.${table} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${selected} FROM ${template}.${table};`;
        }),
      ...sequences.map(
        (sequence) =>
          `SELECT pg_catalog.setval('${schema}.${sequence.name}', ${sequence.lastValue}, ${String(sequence.isCalled)});`,
      ),
      ...(options.analysed ? [`ANALYZE ${tables.map(({ table }) => `${schema}.${table}`).join(', ')};`] : []),
    ].join('\n');

  // One script, so one implicit transaction: a copy is there whole or not at all.
  const fill = (schema: string) =>
    withPostgresClient((client) => client.query(scriptFor(schema)), baseUrl).then(() => undefined);

  const make = async (): Promise<string> => {
    const schema = `${options.namedAfterTemplate ? template : 't'}_${randomBytes(8).toString('hex')}`;
    await withPostgresClient((client) => client.query(`CREATE SCHEMA ${schema};\n${scriptFor(schema)}`), baseUrl);
    return schema;
  };
  const dropSchema = (schema: string) =>
    withPostgresClient((client) => client.query(`DROP SCHEMA ${schema} CASCADE`), baseUrl).then(() => undefined);

  // From the second copy on, the next one is made while the test holding the last one runs, and a
  // dropped copy goes away meanwhile too: the test waits for neither. close() waits for both.
  let spare: Promise<string> | undefined;
  let cloned = false;
  const dropping = new Set<Promise<void>>();
  const failures: unknown[] = [];
  const dropLater = (schema: string) => {
    const dropped = dropSchema(schema).catch((error: unknown) => void failures.push(error));
    dropping.add(dropped);
    void dropped.finally(() => dropping.delete(dropped));
  };

  return {
    fill,
    clone: async () => {
      const schema = await (spare ?? make());
      // Ahead only once copies are asked for again and again (a single copy wants no spare).
      spare = cloned ? make() : undefined;
      cloned = true;
      // Seen by close() or the next clone(); not an unhandled rejection meanwhile.
      spare?.catch(() => undefined);
      return {
        schema,
        url: schemaUrl(schema, baseUrl),
        drop: async () => dropLater(schema),
      };
    },
    close: async () => {
      const made = spare;
      spare = undefined;
      if (made) dropLater(await made);
      await Promise.all(dropping);
      if (failures.length > 0) throw new AggregateError(failures.splice(0), 'dropping copies of a schema failed');
    },
  };
}

interface TableToCopy {
  table: string;
  /** Its columns a row can be inserted with (generated ones aside), quoted and joined. */
  columns: string;
  rows: boolean;
}

/** The schema's tables, each after those its foreign keys point to (a key to itself aside). */
async function tablesInForeignKeyOrder(client: pg.Client, schema: string): Promise<TableToCopy[]> {
  const tables = (
    await client.query<{ table: string; columns: string; references: string[] }>(
      `SELECT c.relname AS table,
         (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns,
         ARRAY(SELECT DISTINCT r.relname::text FROM pg_constraint k JOIN pg_class r ON r.oid = k.confrelid
               WHERE k.conrelid = c.oid AND k.contype = 'f' AND k.confrelid <> c.oid) AS references
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
      [schema],
    )
  ).rows;
  const ordered: TableToCopy[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const next = tables.filter(
      (table) => !placed.has(table.table) && table.references.every((referenced) => placed.has(referenced)),
    );
    if (next.length === 0) throw new Error(`foreign keys of schema ${schema} form a cycle: copy it another way`);
    for (const table of next) {
      const [{ rows }] = (
        await client.query<{ rows: boolean }>(`SELECT EXISTS (SELECT FROM ${schema}.${table.table}) AS rows`)
      ).rows as [{ rows: boolean }];
      ordered.push({ table: table.table, columns: table.columns, rows });
      placed.add(table.table);
    }
  }
  return ordered;
}

/**
 * What a test can tell apart in a schema, its name written as `<schema>`: tables and their columns
 * (in order, with types, defaults, identity and the sequences they own), constraints, indexes,
 * triggers, functions, sequences with their positions, and every row of every table (but the
 * migration records' applied_at, which a copy stamps with its own time: STAMPED_NOW).
 */
export async function schemaSnapshot(schema: string, baseUrl = POSTGRES_URL): Promise<Record<string, unknown>> {
  return withPostgresClient(async (client) => {
    const rows = async (text: string) => (await client.query(text, [schema])).rows as Record<string, unknown>[];
    const snapshot = {
      tables: await rows(
        `SELECT c.relname, c.relkind, c.relpersistence, c.reloptions, c.relrowsecurity, c.reltuples
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind <> 'i' ORDER BY c.relname`,
      ),
      columns: await rows(
        `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
           pg_get_expr(d.adbin, d.adrelid) AS "default", a.attidentity, a.attgenerated, a.attcollation::regcollation::text,
           pg_get_serial_sequence(quote_ident(n.nspname) || '.' || quote_ident(c.relname), a.attname) AS owned_sequence,
           row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum) AS position
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm') AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY c.relname, a.attnum`,
      ),
      constraints: await rows(
        `SELECT c.relname, k.conname, k.contype, k.condeferrable, k.condeferred, k.convalidated,
           pg_get_constraintdef(k.oid) AS definition
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 ORDER BY c.relname, k.conname`,
      ),
      indexes: await rows(
        `SELECT x.indexname, x.tablename, x.indexdef, i.indisvalid, i.indisready, i.indisunique, i.indisprimary
         FROM pg_indexes x JOIN pg_index i ON i.indexrelid = (quote_ident(x.schemaname) || '.' || quote_ident(x.indexname))::regclass
         WHERE x.schemaname = $1 ORDER BY x.indexname`,
      ),
      triggers: await rows(
        `SELECT t.tgname, pg_get_triggerdef(t.oid) AS definition, t.tgenabled
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY t.tgname`,
      ),
      functions: await rows(
        `SELECT p.proname, pg_get_functiondef(p.oid) AS definition
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY p.proname`,
      ),
      sequences: await rows(
        `SELECT sequencename, data_type::text, start_value, min_value, max_value, increment_by, cycle, cache_size, last_value
         FROM pg_sequences WHERE schemaname = $1 ORDER BY sequencename`,
      ),
      rows: {} as Record<string, unknown[]>,
    };
    for (const { relname } of snapshot.tables.filter((table) => table.relkind === 'r')) {
      snapshot.rows[String(relname)] = (
        await client.query<{ row: string }>(
          `SELECT (to_jsonb(t) - $1::text)::text AS row FROM ${schema}.${String(relname)} t ORDER BY 1`,
          [STAMPED_NOW[String(relname)] ?? ''],
        )
      ).rows.map(({ row }) => row);
    }
    return JSON.parse(JSON.stringify(snapshot).replace(new RegExp(`\\b${schema}\\b`, 'g'), '<schema>')) as Record<
      string,
      unknown
    >;
  }, baseUrl);
}
