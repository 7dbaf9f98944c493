import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import type { Environment, Scope } from '../../src/domain/tenancy.js';
import { ENVIRONMENTS, SCOPES } from '../../src/domain/tenancy.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';

export type TokenSet = Record<Environment, Record<Scope, string>>;

export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  /** Directory holding the SQLite file, its WAL and the key file. */
  dir: string;
  databasePath: string;
  /** API token secrets: workspace `default` and a second workspace `other`, every environment and scope. */
  tokens: { default: TokenSet; other: TokenSet };
  /** Starts listening on an ephemeral loopback port; returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  rateLimitPerMinute?: number | 'off';
  encryptionKey?: string;
  /** Reuse an existing directory (e.g. to reopen a database); a fresh temp dir otherwise. */
  dir?: string;
}

/** A real app on a real SQLite file in a temp dir, with API tokens of every kind ready to use. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ugs-test-'));
  const databasePath = join(dir, 'ugs.db');
  const runtime = await openRuntime({ databaseUrl: `sqlite:${databasePath}`, encryptionKey: options.encryptionKey });
  const other = (await runtime.store.findWorkspaceByName('other')) ?? (await runtime.services.workspaces.createWorkspace('other', { type: 'cli' }));
  const tokens = {
    default: await issueTokenSet(runtime, runtime.defaultWorkspace.id),
    other: await issueTokenSet(runtime, other.id),
  };
  const app = await buildApp({
    services: runtime.services,
    store: runtime.store,
    logger: false,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 'off',
    version: 'test',
  });
  await app.ready();
  return {
    app,
    runtime,
    dir,
    databasePath,
    tokens,
    async listen() {
      return app.listen({ port: 0, host: '127.0.0.1' });
    },
    async close() {
      await app.close();
      await runtime.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function issueTokenSet(runtime: Runtime, workspaceId: number): Promise<TokenSet> {
  const set = {} as TokenSet;
  for (const environment of ENVIRONMENTS) {
    set[environment] = {} as Record<Scope, string>;
    for (const scope of SCOPES) {
      const caller = { tenant: { workspaceId, environment }, scope: 'admin' as const, actor: { type: 'cli' as const }, requestId: null };
      const { secret } = await runtime.services.apiTokens.createApiToken(caller, { name: `${scope}-${environment}`, scope, environment });
      set[environment][scope] = secret;
    }
  }
  return set;
}
