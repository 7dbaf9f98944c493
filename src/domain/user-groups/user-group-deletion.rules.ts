import type { UserGroupDeletion } from './user-groups.port.js';

/**
 * "Has children, refuse the delete" (docs/api.md#hierarchy-demo-groups-and-tags): a group that is the parent of any other is not
 * deleted, and the refusal names how many children it has; nothing is written. The engine counts the
 * children under the transaction's lock and asks this rule; undefined: the delete may go ahead.
 * Both engines ask it; PostgreSQL's two delete paths (the one statement `…IfNoEndpointWants` and its
 * transaction) count the children in the statement itself (the CTE `target`, `AND target.children = 0`,
 * so nothing is deleted while children exist) and take the refusal from here (docs/adr/0021-rules-modules-and-domain-ports.md).
 */
export function deletionRefusal(children: number): UserGroupDeletion | undefined {
  return children > 0 ? { status: 'has_children', children } : undefined;
}
