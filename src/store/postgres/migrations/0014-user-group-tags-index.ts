import type { PostgresMigration } from '../migrate.js';

/*
 * The groups carrying a tag (the admin list's tag filter, a sync's prune) found through an index
 * rather than by reading every group of the tenant. Built concurrently: user_groups may hold millions
 * of rows, and writes go on meanwhile. An expand step: the previous release never reads it.
 */
export const userGroupTagsIndex: PostgresMigration = {
  version: 14,
  name: 'user group tags index',
  kind: 'expand',
  sql: '',
  concurrentIndexes: [
    {
      name: 'user_groups_tags',
      sql: 'CREATE INDEX CONCURRENTLY IF NOT EXISTS user_groups_tags ON user_groups USING gin (tags)',
    },
  ],
};
