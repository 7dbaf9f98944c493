import type { Migration } from '../../migration.js';

/*
 * Hierarchy, demo groups and tags (docs/api.md#hierarchy-demo-groups-and-tags): as SQLite's migration 6 says, with tags as a text
 * array. Every new column has a constant default (or none), so adding them rewrites no row. The
 * foreign key is named for postgres-errors.ts.
 */
export const hierarchy: Migration = {
  version: 6,
  name: 'hierarchy, demo groups and tags',
  kind: 'contract',
  sql: `
ALTER TABLE user_groups
  ADD COLUMN parent_team_id bigint CONSTRAINT user_groups_parent_fkey REFERENCES user_groups(team_id),
  ADD COLUMN is_demo_group boolean NOT NULL DEFAULT false,
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
CREATE INDEX user_groups_parent ON user_groups (parent_team_id) WHERE parent_team_id IS NOT NULL;
`,
};
