/** One forward-only schema step. Versions are dense and increasing; a shipped one never changes. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
