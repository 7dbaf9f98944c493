// What every program of generators.test.ts does, through the client one generator made from
// openapi.json, and what it prints: one JSON line, a ScenarioOutcome (`report`).
//
// Create a schema and a data source; get-or-create a group (twice: created, then found) with a
// mapping, properties and tags; update, rotate, verify; mint an embed token and verify it; list
// groups, audit events, data sources, schemas, API tokens, signing keys, webhook endpoints and
// deliveries, the group's usage and the top usage; delete the group, then verify its token again (404).

export interface ScenarioOutcome {
  created: boolean;
  createdAgain: boolean;
  sameGroup: boolean;
  isDemoGroup: boolean;
  tags: string[];
  properties: unknown;
  mapping: unknown;
  /** The mapping the group should carry: schema id to data source id, both as strings. */
  expectedMapping: Record<string, string>;
  updatedName: string;
  updatedTags: string[];
  rotated: boolean;
  verifiedSameGroup: boolean;
  embedExpiresAt: string;
  embedVerified: boolean;
  listedIds: string[];
  auditActions: string[];
  dataSourceListed: boolean;
  schemaListed: boolean;
  adminTokenListed: boolean;
  signingKeyListed: boolean;
  webhookEndpointCount: number;
  failedDeliveries: { count: number; nextCursor: string | null };
  usage: { userGroupId: string; days: number };
  topUsageMetric: string;
  deleted: number;
  goneStatus: number | undefined;
  goneCode: string | undefined;
}

/** The server, an admin API token and the group id this program's run uses (UGS_URL, UGS_TOKEN, UGS_GROUP_ID). */
export function scenarioSettings(): { baseUrl: string; token: string; groupId: string } {
  const { UGS_URL: baseUrl, UGS_TOKEN: token, UGS_GROUP_ID: groupId } = process.env;
  if (!baseUrl || !token || !groupId) throw new Error('UGS_URL, UGS_TOKEN and UGS_GROUP_ID are required');
  return { baseUrl, token, groupId };
}

/** A group as every generated client types it (the document's UserGroup), as far as the outcome reads it. */
interface Group {
  team_id: number;
  token: string;
  name: string;
  is_demo_group: boolean;
  tags: string[];
  properties: unknown;
  mapping: unknown;
}
type GetOrCreated = { new_user_group: boolean; user_group: Group };

/** The answers of the scenario's calls to get-or-create, update, rotate, verify and mint, as the program got them. */
export interface GroupAnswers {
  schema: { id: number };
  dataSource: { id: number };
  created: GetOrCreated;
  again: GetOrCreated;
  updated: Group;
  rotated: Group;
  verified: Group;
  minted: { expires_at: string };
  embed: unknown;
}

/** The answers of the lists, the delete and the gone token's verification (its status and error code). */
export interface ListAnswers {
  listed: { user_groups: Array<{ provided_id: string }> };
  audited: { audit_events: Array<{ action: string }> };
  dataSources: { data_sources: Array<{ id: number }> };
  top: { metric: string };
  deleted: { success: number };
  gone: { status: number | undefined; code: string | undefined };
}

/** The answers of the other admin lists: the catalogue, API tokens, signing keys, webhooks and the group's usage. */
export interface AdminListAnswers {
  schemas: { schemas: Array<{ id: number }> };
  apiTokens: { api_tokens: Array<{ scope: string }> };
  signingKeys: { signing_keys: unknown[] };
  webhookEndpoints: { webhook_endpoints: unknown[] };
  webhookDeliveries: { webhook_deliveries: unknown[]; next_cursor: string | null };
  usage: { user_group_id: string; days: unknown[] };
}

/** Prints the outcome of the scenario's answers (generators.test.ts reads it). */
export function report(answers: GroupAnswers, lists: ListAnswers, admin: AdminListAnswers): void {
  const { schema, dataSource, created, again, updated, rotated, verified } = answers;
  const { listed, audited, gone } = lists;
  const group = created.user_group;
  const outcome: ScenarioOutcome = {
    created: created.new_user_group,
    createdAgain: again.new_user_group,
    sameGroup: again.user_group.team_id === group.team_id,
    isDemoGroup: group.is_demo_group,
    tags: group.tags,
    properties: group.properties,
    mapping: group.mapping,
    expectedMapping: { [String(schema.id)]: String(dataSource.id) },
    updatedName: updated.name,
    updatedTags: updated.tags,
    rotated: rotated.token !== group.token,
    verifiedSameGroup: verified.team_id === group.team_id,
    embedExpiresAt: answers.minted.expires_at,
    embedVerified: answers.embed !== undefined,
    listedIds: listed.user_groups.map((item) => item.provided_id),
    auditActions: audited.audit_events.map((event) => event.action),
    dataSourceListed: lists.dataSources.data_sources.some((item) => item.id === dataSource.id),
    schemaListed: admin.schemas.schemas.some((item) => item.id === schema.id),
    adminTokenListed: admin.apiTokens.api_tokens.some((item) => item.scope === 'admin'),
    signingKeyListed: admin.signingKeys.signing_keys.length > 0,
    webhookEndpointCount: admin.webhookEndpoints.webhook_endpoints.length,
    failedDeliveries: {
      count: admin.webhookDeliveries.webhook_deliveries.length,
      nextCursor: admin.webhookDeliveries.next_cursor,
    },
    usage: { userGroupId: admin.usage.user_group_id, days: admin.usage.days.length },
    topUsageMetric: lists.top.metric,
    deleted: lists.deleted.success,
    goneStatus: gone.status,
    goneCode: gone.code,
  };
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}
