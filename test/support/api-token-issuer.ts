import type { ApiTokenRecord } from '../../src/domain/api-tokens/api-token.records.js';
import type { Caller, Environment, Scope } from '../../src/domain/tenancy.js';
import type { TestApp } from './test-app.js';
import { uniqueId } from './unique-id.js';

export interface IssueApiTokenOptions {
  /** The admin who issues it: the default workspace's Customer environment unless said. */
  as?: { workspace?: 'default' | 'other'; environment?: Environment };
  /** `read` unless said. */
  scope?: Scope;
  /** The issuing admin's environment unless said. */
  environment?: Environment;
  /** A name no other token of the test has, unless said. */
  name?: string;
}

/** One more API token, issued through the service as the CLI would, beyond the test app's ready-made set. */
export async function issueApiToken(
  t: TestApp,
  options: IssueApiTokenOptions = {},
): Promise<{ record: ApiTokenRecord; secret: string }> {
  const workspace = options.as?.workspace ?? 'default';
  const found = await t.runtime.store.findWorkspaceByName(workspace);
  if (!found) throw new Error(`workspace ${workspace} is missing from the test database`);
  const caller: Caller = {
    tenant: { workspaceId: found.id, environment: options.as?.environment ?? 'Customer' },
    scope: 'admin',
    actor: { type: 'cli' },
    requestId: null,
  };
  return t.runtime.services.apiTokens.createApiToken(caller, {
    name: options.name ?? uniqueId('token'),
    scope: options.scope ?? 'read',
    environment: options.environment ?? caller.tenant.environment,
  });
}
