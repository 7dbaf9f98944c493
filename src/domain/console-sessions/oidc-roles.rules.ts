import { ENVIRONMENTS, SCOPES, scopeIncludes, type Environment, type Scope } from '../tenancy.js';

/*
 * Console access from the identity provider's claim (docs/deployment.md, "Console sign-in through an
 * identity provider"): a JSON object from a claim value (a group's name, path or id) to the grants it
 * gives. A person's access is the union of the grants of their claim values; nothing matching is no
 * access. Pure: the sign-in service applies it at sign-in and again at each renewal.
 */

export interface ConsoleGrant {
  /** A workspace's name or id, or `*` for every workspace. */
  workspace: string;
  environment: Environment | '*';
  access: Scope;
}

export type RoleMapping = ReadonlyMap<string, readonly ConsoleGrant[]>;

/** What the person may do in one workspace and environment. */
export interface TenantAccess {
  workspaceId: number;
  workspaceName: string;
  environment: Environment;
  access: Scope;
}

const GRANT_KEYS = new Set(['workspace', 'environment', 'access']);

/** Parses `UGS_OIDC_ROLES`; throws with the offending key and a readable reason. */
export function parseRoleMapping(text: string): RoleMapping {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('must be a JSON object from a claim value to a list of grants');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('must be a JSON object from a claim value to a list of grants');
  const mapping = new Map<string, ConsoleGrant[]>();
  for (const [value, grants] of Object.entries(parsed)) {
    if (!Array.isArray(grants)) throw new Error(`"${value}": must be a list of grants`);
    mapping.set(
      value,
      grants.map((grant: unknown, index) => parseGrant(grant, `"${value}"[${index}]`)),
    );
  }
  return mapping;
}

function parseGrant(grant: unknown, where: string): ConsoleGrant {
  if (typeof grant !== 'object' || grant === null || Array.isArray(grant))
    throw new Error(`${where}: must be an object {"workspace", "environment", "access"}`);
  const fields = grant as Record<string, unknown>;
  const extra = Object.keys(fields).find((key) => !GRANT_KEYS.has(key));
  if (extra !== undefined) throw new Error(`${where}: unknown field "${extra}"`);
  const { workspace, environment, access } = fields;
  if (typeof workspace !== 'string' || workspace === '')
    throw new Error(`${where}: "workspace" must be a workspace's name or id, or "*"`);
  if (environment !== '*' && !ENVIRONMENTS.includes(environment as Environment))
    throw new Error(`${where}: "environment" must be "Customer", "Testing" or "*"`);
  if (!SCOPES.includes(access as Scope)) throw new Error(`${where}: "access" must be "read", "write" or "admin"`);
  return { workspace, environment: environment as Environment | '*', access: access as Scope };
}

/**
 * The claim's values as a list of strings: providers send a list (Keycloak's `/path` groups, Entra's
 * group object ids) or, for a single value, a string. Anything else (absent, as Google sends no
 * `groups`) is no value.
 */
export function claimValues(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * Every workspace and environment the claim values give access to, with the highest access any of
 * their grants gives there; ordered by workspace id, Customer before Testing.
 */
export function accessOf(
  values: readonly string[],
  mapping: RoleMapping,
  workspaces: readonly { id: number; name: string }[],
): TenantAccess[] {
  const granted = new Map<string, TenantAccess>();
  for (const value of values) {
    for (const grant of mapping.get(value) ?? []) {
      for (const workspace of workspaces) {
        if (grant.workspace !== '*' && grant.workspace !== workspace.name && grant.workspace !== String(workspace.id))
          continue;
        for (const environment of ENVIRONMENTS) {
          if (grant.environment !== '*' && grant.environment !== environment) continue;
          const key = `${workspace.id}/${environment}`;
          const known = granted.get(key);
          if (!known || !scopeIncludes(known.access, grant.access))
            granted.set(key, {
              workspaceId: workspace.id,
              workspaceName: workspace.name,
              environment,
              access: grant.access,
            });
        }
      }
    }
  }
  return [...granted.values()].sort(
    (a, b) =>
      a.workspaceId - b.workspaceId || ENVIRONMENTS.indexOf(a.environment) - ENVIRONMENTS.indexOf(b.environment),
  );
}

/**
 * Where a new session acts: the first tenant (in `accessOf`'s order) with the highest access the
 * person has anywhere, so that an admin of one environment starts where they can do most.
 */
export function startingTenant(access: readonly TenantAccess[]): TenantAccess | undefined {
  let best: TenantAccess | undefined;
  for (const tenant of access) if (!best || !scopeIncludes(best.access, tenant.access)) best = tenant;
  return best;
}
