import type { ApiTokenCheck } from './api-tokens/api-token-check.js';

export const ENVIRONMENTS = ['Customer', 'Testing'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** Scopes in increasing power: each includes every scope before it. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_WORKSPACE = 'default';

/** Where an operation acts: nothing it reads or writes crosses this boundary. */
export interface Tenant {
  workspaceId: number;
  environment: Environment;
}

export type Actor = { type: 'api_token'; apiTokenId: number; name: string } | { type: 'cli' };

/** Who is asking, with what power, inside which tenant: the input of every domain operation. */
export interface Caller {
  tenant: Tenant;
  scope: Scope;
  actor: Actor;
  requestId: string | null;
  /** Set when the API token was remembered, not read: the operation's first statement confirms it. */
  tokenCheck?: ApiTokenCheck;
  /**
   * Set when an admin acts in the other environment of its workspace than its API token's: it reads
   * that environment's metadata, never its secrets, such as group tokens (docs/api.md#the-admin-api).
   */
  acrossEnvironments?: true;
}

export function scopeIncludes(granted: Scope, needed: Scope): boolean {
  return SCOPES.indexOf(granted) >= SCOPES.indexOf(needed);
}

/** The same caller acting in another environment of its workspace (admin operations pick one). */
export function inEnvironment(caller: Caller, environment: Environment | undefined): Caller {
  return environment === undefined || environment === caller.tenant.environment
    ? caller
    : { ...caller, tenant: { ...caller.tenant, environment }, acrossEnvironments: true };
}

/** Whether the caller may read the secrets of the environment it acts in: only with that environment's own token. */
export const readsSecrets = (caller: Caller): boolean => caller.acrossEnvironments !== true;
