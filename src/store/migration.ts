/** One forward-only schema step. Versions are dense and increasing; a shipped one never changes. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Refuses a database that a newer release has migrated: this code would misread its tables. */
export function assertNotNewer(applied: number, migrations: readonly Migration[]): void {
  const latest = migrations.at(-1)?.version ?? 0;
  if (applied > latest) {
    throw new Error(
      `The database is at schema version ${applied}, newer than this program knows (${latest}); upgrade the program.`,
    );
  }
}
