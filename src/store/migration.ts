/**
 * One forward-only schema step. Versions are dense and increasing; a shipped one never changes.
 *
 * Two kinds, so that two consecutive releases can share one database during a rolling upgrade
 * (docs/adr/0001-expand-contract-migrations.md):
 * - `expand` adds only what an older program ignores (a table, a nullable or defaulted column, an
 *   index). It is recorded in `schema_expansions`, which older programs never read, so an instance of
 *   the previous release still starts (a crash, a reschedule, a rollback) on a database the new one
 *   has migrated.
 * - `contract` removes or tightens something an older program uses. It is recorded in
 *   `schema_migrations`, whose highest version every program compares with its own: a program that
 *   does not know a contract step refuses the database. Steps 1–13 were all recorded there.
 */
export interface Migration {
  version: number;
  name: string;
  kind: 'expand' | 'contract';
  sql: string;
}

/** What a database says it has: its contract level and the expand steps applied. */
export interface AppliedSchema {
  level: number;
  expansions: ReadonlySet<number>;
}

/** The tables a runner keeps its record in (created when missing, before anything is read). */
export const MIGRATION_RECORD_TABLES = ['schema_migrations', 'schema_expansions'] as const;

/** Refuses a database that a newer release has contracted: this code would misread its tables. */
export function assertNotNewer(applied: number, migrations: readonly Migration[]): void {
  const latest = migrations.findLast((migration) => migration.kind === 'contract')?.version ?? 0;
  if (applied > latest) {
    throw new Error(
      `The database is at schema version ${applied}, newer than this program knows (${latest}); upgrade the program.`,
    );
  }
}

/**
 * The first step (in version order) the database lacks, after refusing a database this program is
 * too old for. Expand steps a newer release added and this one does not know are left alone: by
 * their kind, nothing this program reads or writes depends on them.
 */
export function nextMigration(applied: AppliedSchema, migrations: readonly Migration[]): Migration | undefined {
  assertNotNewer(applied.level, migrations);
  return migrations.find((migration) =>
    migration.kind === 'contract' ? migration.version > applied.level : !applied.expansions.has(migration.version),
  );
}

/** Where a runner records a step it has applied. */
export function recordTableOf(migration: Migration): (typeof MIGRATION_RECORD_TABLES)[number] {
  return migration.kind === 'contract' ? 'schema_migrations' : 'schema_expansions';
}
