// What each scenario sends, as a wrk script (wrk.ts): every request is built just before it is sent,
// so scenarios rotate over many groups instead of hammering one row.
import { ADMIN, type ScenarioName } from './options.js';
import { groupProperties, groupTag } from './seed.js';
import type { Seeded } from './seed.js';
import type { WrkScenario } from './wrk.js';

export interface Scenario {
  name: ScenarioName | 'ceiling';
  /** What one request does, for the report. */
  describe: string;
  /** The script of one measured run; a fresh one each call (a create's ids never repeat). */
  run(): WrkScenario;
  /** The script of the unrecorded run before it, where it must not use up what the measured run needs. */
  warmup(): WrkScenario;
}

/** The ids and tokens a scenario draws from, shared between scenarios of one database. */
export interface ScenarioData {
  seeded: Seeded;
  /** Prefix of the fresh ids that `create` makes; unique per database. */
  createPrefix: string;
  /** Embed tokens minted by the block's service for embed-token-verify (none unless it runs). */
  embedTokens?: string[];
  /** What admin-page-1000 asks for: the cursor that a walk from the first page reached at page `page`. */
  pageCursor?: { page: number; cursor: string };
  /** The 30 days of the seeded usage rows (usage-top-30d). */
  usageRange?: { since: string; until: string };
}

/** A JSON request with the seeded API token. */
function call(seeded: Seeded, method: WrkScenario['method'], path: string): Omit<WrkScenario, 'lines' | 'lua'> {
  return { method, path, headers: { 'content-type': 'application/json', authorization: `Token ${seeded.apiToken}` } };
}

/** Sends the lines in turn, each a whole body. */
const IN_TURN = `local n = 0
next_body = function() n = n % #lines + 1; return lines[n] end`;

function inTurn(
  name: Scenario['name'],
  describe: string,
  request: Omit<WrkScenario, 'lines' | 'lua'>,
  bodies: string[],
  judge = '',
): Scenario {
  const run = () => ({ ...request, lines: bodies, lua: `${IN_TURN}\n${judge}` });
  return { name, describe, run, warmup: run };
}

const expecting = (text: string) =>
  `judge = function(body) return body:find(${JSON.stringify(text)}, 1, true) ~= nil end`;

/** GET /api/user naming an existing group, with the name, mapping and properties a real caller sends. */
export function getExisting(data: ScenarioData, name: 'get-existing' | 'ceiling' = 'get-existing'): Scenario {
  const { seeded } = data;
  const bodies = seeded.ids.map((id, index) =>
    JSON.stringify({
      user_group_id: id,
      name: seeded.names[index],
      mapping: seeded.mappingInput,
      properties: groupProperties(index),
    }),
  );
  return inTurn(
    name,
    'GET /api/user (JSON body) naming an existing group; rotates over the sampled groups',
    call(seeded, 'GET', '/api/user'),
    bodies,
  );
}

/** GET /api/user naming a group at depth 4, whose answer merges its three ancestors' values (docs/api.md#hierarchy-demo-groups-and-tags). */
export function getNested(data: ScenarioData): Scenario {
  const { seeded } = data;
  return inTurn(
    'get-nested',
    'GET /api/user (JSON body) naming an existing group at depth 4; rotates over the seeded chains',
    call(seeded, 'GET', '/api/user'),
    seeded.nestedIds.map((id) => JSON.stringify({ user_group_id: id })),
  );
}

export function verify(data: ScenarioData): Scenario {
  const { seeded } = data;
  return inTurn(
    'verify',
    'POST /api/user/verify with a live token; rotates over the sampled groups',
    call(seeded, 'POST', '/api/user/verify'),
    seeded.tokens.map((token) => JSON.stringify({ token })),
  );
}

/** POST /api/user/verify with embed tokens minted beforehand: a signature check and the group's lookup. */
export function embedTokenVerify(data: ScenarioData): Scenario {
  const { seeded, embedTokens = [] } = data;
  return inTurn(
    'embed-token-verify',
    'POST /api/user/verify with a live embed token (one per group of the first 1 000 sampled): its ES256 signature and the group',
    call(seeded, 'POST', '/api/user/verify'),
    embedTokens.map((token) => JSON.stringify({ token })),
    expecting('"embed":{'),
  );
}

/** Each run starts its revision counter somewhere new, so its names and properties really change the groups. */
let revisions = 0;

export function update(data: ScenarioData): Scenario {
  const { seeded } = data;
  // id, name without its closing quote, properties without their closing brace: the revision goes in.
  const lines = seeded.ids.map((id, index) =>
    [
      JSON.stringify(id),
      JSON.stringify(seeded.names[index]).slice(0, -1),
      JSON.stringify(groupProperties(index)).slice(0, -1),
    ].join('\t'),
  );
  const run = (): WrkScenario => {
    revisions += 10_000_000;
    return {
      ...call(seeded, 'PUT', '/api/user'),
      lines,
      lua: `local n = ${revisions}
next_body = function()
  n = n + 1
  local id, name, properties = lines[n % #lines + 1]:match('([^\\t]*)\\t([^\\t]*)\\t([^\\t]*)')
  if n % 2 == 0 then return string.format('{"user_group_id":%s,"name":%s (rev %d)"}', id, name, n) end
  return string.format('{"user_group_id":%s,"properties":%s,"revision":%d}}', id, properties, n)
end`,
    };
  };
  return {
    name: 'update',
    describe: 'PUT /api/user changing the name (even requests) or the properties (odd) of an existing group',
    run,
    warmup: run,
  };
}

/** A token that is well formed but belongs to no group: sent only if the pool ever runs dry. */
const DEAD_TOKEN = `ugt_${'0'.repeat(64)}`;

/**
 * POST /api/user with a current token. Each request takes the oldest live token of a queue holding
 * one token per group, and a successful rotation puts the new token at its back: every token is
 * presented once, and no two requests in flight ever share one. The warm-up rotates the first half
 * of the sampled groups, the measured run the other half, so every token it starts with is live.
 */
export function rotate(data: ScenarioData): Scenario {
  const { seeded } = data;
  const half = Math.floor(seeded.tokens.length / 2);
  const over = (tokens: string[]) => (): WrkScenario => ({
    ...call(seeded, 'POST', '/api/user'),
    lines: tokens,
    lua: `local head = 0
next_body = function()
  head = head + 1
  return '{"current_token":"' .. (lines[head] or "${DEAD_TOKEN}") .. '"}'
end
${expecting('"token":"ugt_')}
on_ok = function(body) lines[#lines + 1] = body:match('"token":"(ugt_%x+)"') end`,
  });
  return {
    name: 'rotate',
    describe: 'POST /api/user with a current token; the new token goes back into the pool (chained rotations)',
    run: over(seeded.tokens.slice(half)),
    warmup: over(seeded.tokens.slice(0, half)),
  };
}

/** Every run's fresh ids start with their own prefix. */
let createRuns = 0;

export function create(data: ScenarioData): Scenario {
  const { seeded, createPrefix } = data;
  // groupProperties repeats every 300 groups.
  const properties = Array.from({ length: 300 }, (_, n) => JSON.stringify(groupProperties(n)));
  const run = (): WrkScenario => {
    createRuns += 1;
    return {
      ...call(seeded, 'GET', '/api/user'),
      lines: properties,
      lua: `local n = 0
next_body = function()
  n = n + 1
  return string.format('{"user_group_id":"${createPrefix}${createRuns}-%d","name":"New group %d","mapping":%s,"properties":%s}', n, n, ${JSON.stringify(JSON.stringify(seeded.mappingInput))}, lines[n % #lines + 1])
end
${expecting('"new_user_group":true')}`,
    };
  };
  return {
    name: 'create',
    describe:
      'GET /api/user with a fresh id every request (a new group with name, mapping and properties); counts new_user_group:true',
    run,
    warmup: run,
  };
}

export function embedToken(data: ScenarioData): Scenario {
  const { seeded } = data;
  return inTurn(
    'embed-token',
    'POST /api/user/embed_token for an existing group (an hour, an embed_id): a lookup and an ES256 signature',
    call(seeded, 'POST', '/api/user/embed_token'),
    seeded.ids.map((id) => JSON.stringify({ user_group_id: id, embed_id: 'bench' })),
    expecting('"embed_token":"'),
  );
}

/** embed-token's twin for groups of 64 short access rules (within 20 % of minting with none). */
export function embedTokenRules(data: ScenarioData): Scenario {
  const { seeded } = data;
  return inTurn(
    'embed-token-rules',
    'POST /api/user/embed_token as embed-token, for groups of 64 short access rules (a third of them property references)',
    call(seeded, 'POST', '/api/user/embed_token'),
    seeded.ruledIds.map((id) => JSON.stringify({ user_group_id: id, embed_id: 'bench' })),
    expecting('"embed_token":"'),
  );
}

/** An admin path as the bench asks it (one-at-a-time.ts): GETs of `paths` in turn with the admin API token. */
export interface AdminRequests {
  describe: string;
  paths: string[];
}

/** GETs of `paths` in turn, one at a time. */
const adminGets = (describe: string, paths: string[]): AdminRequests => ({ describe, paths });

const LIST = '/api/admin/user_groups';
/** The sampled groups the admin searches rotate over. */
const searched = (seeded: Seeded) => seeded.ids.slice(0, 1000).map((id, index) => [id, seeded.names[index]!] as const);

/** The admin list searched for an id's prefix (the id but its last digit): a prefix range or a name substring. */
export function adminSearchPrefix({ seeded }: ScenarioData): AdminRequests {
  return adminGets(
    'GET /api/admin/user_groups?q=<a sampled id but its last digit> (first page of 100), one request at a time',
    searched(seeded).map(([id]) => `${LIST}?q=${encodeURIComponent(id.slice(0, -1))}`),
  );
}

/** The admin list searched for part of a name, as someone types it: a substring, case folded. */
export function adminSearchName({ seeded }: ScenarioData): AdminRequests {
  return adminGets(
    'GET /api/admin/user_groups?q=<a sampled name but its first and last characters> (first page of 100), one request at a time',
    searched(seeded).map(([, name]) => `${LIST}?q=${encodeURIComponent(name.slice(1, -1))}`),
  );
}

export function adminTagFilter(): AdminRequests {
  return adminGets(
    'GET /api/admin/user_groups?tag=<one of 100 tags, each on 1 % of the groups> (first page of 100), one request at a time',
    Array.from({ length: 100 }, (_, k) => `${LIST}?tag=${groupTag(k)}`),
  );
}

export function adminPage1000({ pageCursor }: ScenarioData): AdminRequests {
  return adminGets(
    `GET /api/admin/user_groups?cursor=<page ${pageCursor?.page ?? 1000}'s, reached by walking from the first> (100 groups), one request at a time`,
    [pageCursor ? `${LIST}?cursor=${encodeURIComponent(pageCursor.cursor)}` : LIST],
  );
}

/** A group's admin page: the group, then its audit trail, in turn. */
export function adminGroupAudit({ seeded }: ScenarioData): AdminRequests {
  return adminGets(
    'GET /api/admin/user_groups/<team_id> and GET /api/admin/audit_events?team_id=<it>&limit=50 in turn, over 1 000 sampled groups, one request at a time',
    seeded.teamIds.flatMap((teamId) => [`${LIST}/${teamId}`, `/api/admin/audit_events?team_id=${teamId}&limit=50`]),
  );
}

export function usageTop30d({ usageRange }: ScenarioData): AdminRequests {
  const range = usageRange ? `since=${usageRange.since}&until=${usageRange.until}&` : '';
  return adminGets(
    "GET /api/admin/usage/top?<the 30 days of the seeded usage rows>&metric=verifications&limit=20 (the console's Usage screen), one request at a time",
    [`/api/admin/usage/top?${range}metric=verifications&limit=20`],
  );
}

/** The scenarios that run in the bench process, not over wrk (the admin paths: one-at-a-time.ts). */
export const IN_PROCESS = [
  ...ADMIN,
  'offline-verify',
  'offline-verify-repeated',
  'webhook-drain',
  'sync-10k',
  'sync-prune-10k',
] as const;

/** The scenarios wrk drives over HTTP. */
export const SCENARIO_FACTORIES: Record<
  Exclude<ScenarioName, (typeof IN_PROCESS)[number]>,
  (data: ScenarioData) => Scenario
> = {
  'get-existing': (data) => getExisting(data),
  'get-nested': getNested,
  verify,
  'embed-token-verify': embedTokenVerify,
  update,
  rotate,
  create,
  'embed-token': embedToken,
  'embed-token-rules': embedTokenRules,
};

/** The admin paths: latency one request at a time, an admin's page rather than a crowd of them. */
export const ADMIN_REQUESTS: Record<(typeof ADMIN)[number], (data: ScenarioData) => AdminRequests> = {
  'admin-search-prefix': adminSearchPrefix,
  'admin-search-name': adminSearchName,
  'admin-tag-filter': adminTagFilter,
  'admin-page-1000': adminPage1000,
  'admin-group-audit': adminGroupAudit,
  'usage-top-30d': usageTop30d,
};
