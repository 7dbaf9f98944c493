import type { Caller, Environment, Scope } from '../../src/domain/tenancy.js';
import type { TestApp } from './test-app.js';

export type Workspace = 'default' | 'other';

/** Who sends a request: defaults to the default workspace's Customer admin. */
export interface As {
  workspace?: Workspace;
  environment?: Environment;
  scope?: Scope;
}

/** The test app's API token secret for `as`. */
export function apiToken(t: TestApp, as: As = {}): string {
  return t.tokens[as.workspace ?? 'default'][as.environment ?? 'Customer'][as.scope ?? 'admin'];
}

export async function workspaceId(t: TestApp, workspace: Workspace = 'default'): Promise<number> {
  if (workspace === 'default') return t.runtime.defaultWorkspace.id;
  const found = await t.runtime.store.findWorkspaceByName(workspace);
  if (!found) throw new Error(`workspace ${workspace} is missing`);
  return found.id;
}

/** An admin of the workspace and environment of `as`, acting as the CLI does: for setting up state through the services. */
export async function adminCaller(t: TestApp, as: Omit<As, 'scope'> = {}): Promise<Caller> {
  return {
    tenant: { workspaceId: await workspaceId(t, as.workspace), environment: as.environment ?? 'Customer' },
    scope: 'admin',
    actor: { type: 'cli' },
    requestId: null,
  };
}
