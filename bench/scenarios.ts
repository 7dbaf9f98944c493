// What each scenario sends. Every request is built just before it is sent (autocannon's
// setupRequest), so scenarios rotate over many groups instead of hammering one row.
import type autocannon from 'autocannon';
import type { ScenarioName } from './options.js';
import { groupProperties } from './seed.js';
import type { Seeded } from './seed.js';

export interface Scenario {
  name: ScenarioName | 'ceiling';
  /** What one request does, for the report. */
  describe: string;
  requests: autocannon.Request[];
  /**
   * Responses that had a 2xx status but not the expected outcome (a create that did not create, a
   * rotation without a new token). Counted as errors, and not as successes.
   */
  wrongOutcomes(): number;
  resetCounters(): void;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The ids and tokens a scenario draws from, shared between scenarios of one database. */
export interface ScenarioData {
  seeded: Seeded;
  /** Prefix of the fresh ids that `create` makes; unique per database. */
  createPrefix: string;
}

function cycle<T>(items: T[]): () => [T, number] {
  let next = 0;
  return () => {
    const index = next;
    next = (next + 1) % items.length;
    return [items[index]!, index];
  };
}

function headers(seeded: Seeded): Record<string, string> {
  return { ...JSON_HEADERS, authorization: `Token ${seeded.apiToken}` };
}

function scenario(
  name: Scenario['name'],
  describe: string,
  request: Omit<autocannon.Request, 'onResponse'>,
  judge?: (status: number, body: string) => boolean,
): Scenario {
  let wrong = 0;
  return {
    name,
    describe,
    requests: [
      {
        ...request,
        ...(judge
          ? {
              onResponse: (status: number, body: string) => {
                if (status >= 200 && status < 300 && !judge(status, body)) wrong += 1;
              },
            }
          : {}),
      },
    ],
    wrongOutcomes: () => wrong,
    resetCounters: () => {
      wrong = 0;
    },
  };
}

/** GET /api/user naming an existing group, with the name, mapping and properties a real caller sends. */
export function getExisting(data: ScenarioData, name: 'get-existing' | 'ceiling' = 'get-existing'): Scenario {
  const { seeded } = data;
  const next = cycle(seeded.ids);
  return scenario(name, 'GET /api/user (JSON body) naming an existing group; rotates over the sampled groups', {
    method: 'GET',
    path: '/api/user',
    headers: headers(seeded),
    setupRequest: (req) => {
      const [id, index] = next();
      const body = { user_group_id: id, name: seeded.names[index], mapping: seeded.mappingInput, properties: groupProperties(index) };
      return { ...req, body: JSON.stringify(body) };
    },
  });
}

/** GET /api/user naming a group at depth 4, whose answer merges its three ancestors' values (SPEC §11). */
export function getNested(data: ScenarioData): Scenario {
  const { seeded } = data;
  const next = cycle(seeded.nestedIds);
  return scenario('get-nested', 'GET /api/user (JSON body) naming an existing group at depth 4; rotates over the seeded chains', {
    method: 'GET',
    path: '/api/user',
    headers: headers(seeded),
    setupRequest: (req) => ({ ...req, body: JSON.stringify({ user_group_id: next()[0] }) }),
  });
}

export function verify(data: ScenarioData): Scenario {
  const { seeded } = data;
  const next = cycle(seeded.tokens);
  return scenario('verify', 'POST /api/user/verify with a live token; rotates over the sampled groups', {
    method: 'POST',
    path: '/api/user/verify',
    headers: headers(seeded),
    setupRequest: (req) => ({ ...req, body: JSON.stringify({ token: next()[0] }) }),
  });
}

export function update(data: ScenarioData): Scenario {
  const { seeded } = data;
  const next = cycle(seeded.ids);
  let n = 0;
  return scenario('update', 'PUT /api/user changing the name (even requests) or the properties (odd) of an existing group', {
    method: 'PUT',
    path: '/api/user',
    headers: headers(seeded),
    setupRequest: (req) => {
      const [id, index] = next();
      n += 1;
      const body =
        n % 2 === 0
          ? { user_group_id: id, name: `${seeded.names[index]} (rev ${n})` }
          : { user_group_id: id, properties: { ...groupProperties(index), revision: n } };
      return { ...req, body: JSON.stringify(body) };
    },
  });
}

/** A token that is well formed but belongs to no group: sent only if the pool ever runs dry. */
const DEAD_TOKEN = `ugt_${'0'.repeat(64)}`;
const TOKEN_IN_BODY = /"token":"(ugt_[0-9a-f]{64})"/;

/**
 * POST /api/user with a current token. Each request takes the oldest live token of a queue holding
 * one token per sampled group, and a successful rotation puts the new token at its back: every token
 * is presented once, and no two requests in flight ever share one. A token whose rotation failed is
 * dropped (it may be dead); a 404 for it would count as an error, never as a success.
 */
export function rotate(data: ScenarioData): Scenario {
  const { seeded } = data;
  let queue = [...seeded.tokens];
  let head = 0;
  const take = (): string => {
    if (head >= queue.length) return DEAD_TOKEN;
    const token = queue[head]!;
    head += 1;
    if (head > 100_000) {
      queue = queue.slice(head);
      head = 0;
    }
    return token;
  };
  return scenario(
    'rotate',
    'POST /api/user with a current token; the new token goes back into the pool (chained rotations)',
    {
      method: 'POST',
      path: '/api/user',
      headers: headers(seeded),
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ current_token: take() }) }),
    },
    (_status, body) => {
      const token = TOKEN_IN_BODY.exec(body)?.[1];
      if (token === undefined) return false;
      queue.push(token);
      return true;
    },
  );
}

export function create(data: ScenarioData): Scenario {
  const { seeded, createPrefix } = data;
  let n = 0;
  return scenario(
    'create',
    'GET /api/user with a fresh id every request (a new group with name, mapping and properties); counts new_user_group:true',
    {
      method: 'GET',
      path: '/api/user',
      headers: headers(seeded),
      setupRequest: (req) => {
        n += 1;
        const body = { user_group_id: `${createPrefix}${n}`, name: `New group ${n}`, mapping: seeded.mappingInput, properties: groupProperties(n) };
        return { ...req, body: JSON.stringify(body) };
      },
    },
    (_status, body) => body.includes('"new_user_group":true'),
  );
}

export function embedToken(data: ScenarioData): Scenario {
  const { seeded } = data;
  const next = cycle(seeded.ids);
  return scenario(
    'embed-token',
    'POST /api/user/embed_token for an existing group (an hour, an embed_id): a lookup and an ES256 signature',
    {
      method: 'POST',
      path: '/api/user/embed_token',
      headers: headers(seeded),
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ user_group_id: next()[0], embed_id: 'bench' }) }),
    },
    (_status, body) => body.includes('"embed_token":"'),
  );
}

/** The scenarios autocannon drives over HTTP; `offline-verify` and `webhook-drain` run in the bench process (offline-verify.ts, webhook-drain.ts). */
export const SCENARIO_FACTORIES: Record<Exclude<ScenarioName, 'offline-verify' | 'webhook-drain'>, (data: ScenarioData) => Scenario> = {
  'get-existing': (data) => getExisting(data),
  'get-nested': getNested,
  verify,
  update,
  rotate,
  create,
  'embed-token': embedToken,
};
