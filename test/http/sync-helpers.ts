import { inject, type ApiResponse } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { expectSuccess } from './helpers.js';
import { withQuery } from '../support/paged-list.js';
import { randomBytes } from 'node:crypto';
import { adminCaller, apiToken, type As } from '../support/callers.js';
import type { SyncWrite } from '../../src/domain/user-group-sync/user-group-sync.port.js';

/** Shared by the sync test files (docs/api.md#sync-tenants-as-code). */

export const SYNC_PATH = '/api/admin/user_groups/sync';

export type SyncLine = Record<string, unknown>;

export interface SyncRequest {
  dryRun?: boolean;
  prune?: string;
  environment?: string;
  /** The JSON array form instead of NDJSON. */
  array?: boolean;
  /** Sent as it is (NDJSON content type unless `array`). */
  rawBody?: string;
  as?: As;
}

/** The groups as NDJSON text, one per line. */
export const ndjson = (lines: SyncLine[]): string => lines.map((line) => JSON.stringify(line)).join('\n') + '\n';

export function syncCall(t: TestApp, lines: SyncLine[], request: SyncRequest = {}): Promise<ApiResponse> {
  return inject(t.app, {
    method: 'POST',
    path: withQuery(SYNC_PATH, {
      dry_run: request.dryRun ? 'true' : undefined,
      prune: request.prune,
      environment: request.environment,
    }),
    token: apiToken(t, request.as),
    rawBody: request.rawBody ?? (request.array ? JSON.stringify(lines) : ndjson(lines)),
    headers: { 'content-type': request.array ? 'application/json' : 'application/x-ndjson' },
  });
}

/** The `sync` object of a successful sync. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function syncOk(t: TestApp, lines: SyncLine[], request: SyncRequest = {}): Promise<any> {
  return expectSuccess(await syncCall(t, lines, request)).sync;
}

/** `count` groups under a fresh prefix: roots, each followed by its children (ten to a root), all tagged. */
export function fleet(prefix: string, count: number, tag: string): SyncLine[] {
  return Array.from({ length: count }, (_, i) => {
    const root = i - (i % 10);
    return {
      user_group_id: `${prefix}-${i}`,
      name: `Customer ${i}`,
      properties: { plan: i % 3 === 0 ? 'pro' : 'free', seats: i },
      tags: [tag],
      ...(i % 10 === 0 ? {} : { parent_user_group_id: `${prefix}-${root}` }),
    };
  });
}

/**
 * `roots` tagged roots, each with `childrenEach` tagged children, straight into the store through a
 * sync's own apply (thousands to a transaction): setup for prunes at scale, not thousands of requests.
 */
export async function seedTaggedTree(
  t: TestApp,
  prefix: string,
  tag: string,
  { roots, childrenEach = 0 }: { roots: number; childrenEach?: number },
): Promise<number> {
  const tenant = (await adminCaller(t)).tenant;
  const create = (providedId: string, parentProvidedId: string | null): SyncWrite => ({
    kind: 'create',
    at: { line: 1 },
    group: {
      tenant,
      providedId,
      name: providedId,
      tokenHash: randomBytes(32).toString('hex'),
      tokenCiphertext: randomBytes(32).toString('hex'),
      properties: { seeded: true },
      mapping: [],
      parentProvidedId,
      isDemoGroup: false,
      tags: [tag],
      accessRules: [],
      createdAt: new Date().toISOString(),
    },
    changes: {},
  });
  const steps = [
    ...Array.from({ length: roots }, (_, r) => create(`${prefix}-${r}`, null)),
    ...Array.from({ length: roots * childrenEach }, (_, n) =>
      create(`${prefix}-${n % roots}-${Math.floor(n / roots)}`, `${prefix}-${n % roots}`),
    ),
  ];
  for (let start = 0; start < steps.length; start += 5000) {
    await t.runtime.store.applyUserGroupWrites(
      tenant,
      steps.slice(start, start + 5000),
      {
        at: new Date().toISOString(),
        actor: { type: 'cli' },
        requestId: null,
        syncId: `sync_seed_${start}`,
      },
      { policy: 'all_or_nothing' },
    );
  }
  return steps.length;
}
