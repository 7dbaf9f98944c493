import type { Migration } from '../../migration.js';

/*
 * Hierarchy, demo groups and tags (docs/api.md#hierarchy-demo-groups-and-tags). parent_team_id links a group to its parent by team id,
 * so a rename of either keeps the link; the foreign key keeps a parent from being deleted under its
 * children (the store refuses that first, with the count). tags is a JSON array, sorted and distinct
 * as the domain writes it: reads take it whole, and the tag filter of the admin list walks it.
 */
export const hierarchy: Migration = {
  version: 6,
  name: 'hierarchy, demo groups and tags',
  kind: 'contract',
  sql: `
ALTER TABLE user_groups ADD COLUMN parent_team_id INTEGER REFERENCES user_groups(team_id);
ALTER TABLE user_groups ADD COLUMN is_demo_group INTEGER NOT NULL DEFAULT 0 CHECK (is_demo_group IN (0, 1));
ALTER TABLE user_groups ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
CREATE INDEX user_groups_parent ON user_groups(parent_team_id) WHERE parent_team_id IS NOT NULL;
`,
};
