// The engine-neutral rules modules (src/domain/*.rules.ts), without a database: what a change
// decides over the rows read inside its transaction, and the audit entries it writes.
import { describe, expect, it } from 'vitest';
import { apiTokenCreated, apiTokenRevoked, planRateLimitUpdate } from '../../src/domain/api-tokens/api-tokens.rules.js';
import { changedFields } from '../../src/domain/audit/audit-entry.js';
import {
  dataSourceCreated,
  planDataSourceDeletion,
  planDataSourceUpdate,
} from '../../src/domain/data-sources/data-sources.rules.js';
import { failure } from '../../src/domain/errors.js';
import { requestFingerprint } from '../../src/domain/idempotency/idempotency.rules.js';
import type { ApiTokenRecord } from '../../src/domain/api-tokens/api-token.records.js';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import type { UserGroupRecord } from '../../src/domain/user-groups/user-group.records.js';
import type { WebhookEndpointRecord } from '../../src/domain/webhook-endpoints/webhook.records.js';
import { batchWriteEntry, groupAudit, groupEntry } from '../../src/domain/user-groups/user-groups.rules.js';
import type { NewUserGroup } from '../../src/domain/user-groups/user-group.records.js';
import type { UserGroupUpdate } from '../../src/domain/user-groups/user-groups.port.js';
import {
  attemptFollowUp,
  endpointDeleted,
  endpointDisabled,
  endpointUpdated,
  secretRotated,
} from '../../src/domain/webhook-endpoints/webhook-endpoints.rules.js';

const T = '2026-11-25T10:00:00.000Z';

const dataSource: DataSourceRecord = {
  id: 4,
  workspaceId: 1,
  environment: 'Customer',
  providedId: 'warehouse',
  name: 'Warehouse',
  schemaId: 2,
  shared: false,
  createdAt: T,
};

describe('data sources', () => {
  it('records every audited field of a new data source, from nothing', () => {
    expect(dataSourceCreated(dataSource)).toEqual({
      action: 'data_source.created',
      workspaceId: 1,
      environment: 'Customer',
      providedId: 'warehouse',
      changes: {
        id: { before: null, after: 4 },
        provided_id: { before: null, after: 'warehouse' },
        name: { before: null, after: 'Warehouse' },
        schema_id: { before: null, after: 2 },
      },
    });
  });

  it('renames a data source that groups map to, writing and auditing only the fields that change', () => {
    const plan = planDataSourceUpdate(dataSource, { name: 'Lake', schemaId: 2 }, 3);
    expect(plan.result).toEqual({ status: 'changed', dataSource: { ...dataSource, name: 'Lake' } });
    expect(plan.write).toEqual({ ...dataSource, name: 'Lake' });
    expect(plan.entries).toEqual([
      {
        action: 'data_source.updated',
        workspaceId: 1,
        environment: 'Customer',
        providedId: 'warehouse',
        changes: { name: { before: 'Warehouse', after: 'Lake' } },
      },
    ]);
  });

  it('names the data source by its new provided id in the audit event of a re-id', () => {
    const plan = planDataSourceUpdate(dataSource, { providedId: 'lake' }, 0);
    expect(plan.entries[0]).toMatchObject({
      providedId: 'lake',
      changes: { provided_id: { before: 'warehouse', after: 'lake' } },
    });
  });

  it('refuses to move a data source to another schema while a group maps to it, and writes nothing', () => {
    expect(planDataSourceUpdate(dataSource, { schemaId: 3 }, 2)).toEqual({
      result: { status: 'in_use', usedBy: 2 },
      entries: [],
    });
    expect(planDataSourceUpdate(dataSource, { schemaId: 3 }, 0).write).toEqual({ ...dataSource, schemaId: 3 });
  });

  it('writes and audits nothing for a patch that changes nothing', () => {
    expect(planDataSourceUpdate(dataSource, { name: 'Warehouse', providedId: 'warehouse' }, 0)).toEqual({
      result: { status: 'changed', dataSource },
      entries: [],
    });
  });

  it('reports a data source gone by the time the transaction read it', () => {
    expect(planDataSourceUpdate(null, { name: 'x' }, 0)).toEqual({ result: { status: 'not_found' }, entries: [] });
    expect(planDataSourceDeletion(null, 0)).toEqual({ result: { status: 'not_found' }, entries: [] });
  });

  it('deletes a data source only while no group maps to it, auditing every field going away', () => {
    expect(planDataSourceDeletion(dataSource, 1)).toEqual({ result: { status: 'in_use', usedBy: 1 }, entries: [] });
    const plan = planDataSourceDeletion(dataSource, 0);
    expect(plan.remove).toBe(dataSource);
    expect(plan.entries[0]?.action).toBe('data_source.deleted');
    expect(plan.entries[0]?.changes).toEqual({
      id: { before: 4, after: null },
      provided_id: { before: 'warehouse', after: null },
      name: { before: 'Warehouse', after: null },
      schema_id: { before: 2, after: null },
    });
  });

  it('words the refusal with the number of groups in the way', () => {
    expect(failure.dataSourceInUse(4, 1, 'remove it from their mappings first').message).toBe(
      '1 user group maps to data source 4: remove it from their mappings first.',
    );
    expect(failure.dataSourceInUse(4, 3, 'its schema cannot change').message).toBe(
      '3 user groups map to data source 4: its schema cannot change.',
    );
  });
});

const token: ApiTokenRecord = {
  id: 9,
  workspaceId: 1,
  environment: 'Testing',
  name: 'ci',
  scope: 'write',
  rateLimit: null,
  createdAt: T,
  lastUsedAt: null,
  revokedAt: null,
};

describe('API tokens', () => {
  it('records a rate limit on a new token only when it has one of its own', () => {
    expect(apiTokenCreated(token).changes).not.toHaveProperty('rate_limit');
    expect(apiTokenCreated({ ...token, rateLimit: { perSecond: 5, burst: 10 } }).changes?.rate_limit).toEqual({
      before: null,
      after: { per_second: 5, burst: 10 },
    });
  });

  it('writes and audits a new rate limit only when it differs from the current one', () => {
    expect(planRateLimitUpdate(token, null)).toEqual({ result: token, entries: [] });
    expect(
      planRateLimitUpdate({ ...token, rateLimit: { perSecond: 5, burst: 10 } }, { perSecond: 5, burst: 10 }).entries,
    ).toEqual([]);
    const plan = planRateLimitUpdate(token, { perSecond: 5, burst: 10 });
    expect(plan.write).toEqual({ ...token, rateLimit: { perSecond: 5, burst: 10 } });
    expect(plan.entries).toEqual([
      {
        action: 'api_token.updated',
        workspaceId: 1,
        environment: 'Testing',
        changes: { rate_limit: { before: null, after: { per_second: 5, burst: 10 } } },
      },
    ]);
  });

  it('audits nothing for a token that was not live', () => {
    expect(planRateLimitUpdate(null, { perSecond: 1, burst: 1 })).toEqual({ result: null, entries: [] });
    expect(apiTokenRevoked(null)).toEqual({ result: null, entries: [] });
    expect(apiTokenRevoked({ ...token, revokedAt: T }).entries[0]?.changes).toEqual({
      revoked_at: { before: null, after: T },
    });
  });
});

describe('user groups', () => {
  const group = {
    teamId: 7,
    workspaceId: 1,
    environment: 'Customer',
    providedId: 'acme',
    name: 'Acme',
    tokenHash: 'hash',
    tokenCiphertext: 'cipher',
    properties: null,
    mapping: [],
    parentProvidedId: null,
    ancestors: [],
    isDemoGroup: false,
    tags: [],
    accessRules: [],
    version: 1,
    tokenGeneration: 0,
    createdAt: T,
    updatedAt: T,
  } as UserGroupRecord;

  it('names the group in its audit event and leaves the token out of its webhook subject', () => {
    const entry = groupEntry(groupAudit('user_group.created', { name: { before: null, after: 'Acme' } }), group);
    expect(entry).toMatchObject({
      action: 'user_group.created',
      workspaceId: 1,
      environment: 'Customer',
      teamId: 7,
      providedId: 'acme',
      changes: { name: { before: null, after: 'Acme' } },
    });
    const subject = entry.subject?.();
    expect(subject?.kind).toBe('user_group');
    expect(JSON.stringify(subject)).not.toMatch(/hash|cipher/);
  });

  it('audits each write of an import batch, and refuses the whole batch for a write that wrote nothing', () => {
    const create = {
      kind: 'create' as const,
      group: { providedId: 'acme' } as NewUserGroup,
      changes: { name: { before: null, after: 'Acme' } },
    };
    const update = {
      kind: 'update' as const,
      update: { teamId: 7 } as UserGroupUpdate,
      changes: { name: { before: 'Acme', after: 'Acme 2' } },
    };
    expect(batchWriteEntry(create, group)).toMatchObject({
      action: 'user_group.created',
      teamId: 7,
      changes: create.changes,
    });
    expect(batchWriteEntry(update, group)).toMatchObject({
      action: 'user_group.updated',
      teamId: 7,
      changes: update.changes,
    });
    expect(() => batchWriteEntry(create, undefined)).toThrow(
      expect.objectContaining({
        code: 'concurrent_change',
        message: 'A user group with id "acme" was created meanwhile, so the batch wrote nothing.',
      }),
    );
    expect(() => batchWriteEntry(update, null)).toThrow(
      expect.objectContaining({
        code: 'concurrent_change',
        message: 'User group 7 changed or was deleted meanwhile, so the batch wrote nothing.',
      }),
    );
  });

  it('records no changes as SQL NULL, not as an empty object', () => {
    expect(groupAudit('user_group.deleted', undefined)).toEqual({ action: 'user_group.deleted', changes: null });
  });
});

describe('webhook endpoints', () => {
  const endpoint: WebhookEndpointRecord = {
    id: 3,
    workspaceId: 1,
    environment: 'Customer',
    url: 'https://hooks.example.com/a',
    events: ['*'],
    description: '',
    enabled: true,
    secretCiphertext: 'secret',
    previousSecretCiphertext: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    createdAt: T,
    updatedAt: T,
  } as WebhookEndpointRecord;

  it('audits the fields a patch changed and nothing for one that changed none', () => {
    expect(endpointUpdated(endpoint, { ...endpoint, events: ['*'], description: '' })).toEqual([]);
    expect(endpointUpdated(endpoint, { ...endpoint, events: ['user_group.created'], enabled: false })).toEqual([
      {
        action: 'webhook_endpoint.updated',
        workspaceId: 1,
        environment: 'Customer',
        changes: { events: { before: ['*'], after: ['user_group.created'] }, enabled: { before: true, after: false } },
      },
    ]);
  });

  it('never puts a secret into an audit event', () => {
    const entries = [
      ...endpointDeleted(endpoint),
      ...secretRotated({ ...endpoint, previousSecretExpiresAt: T }),
      ...endpointDisabled({ ...endpoint, enabled: false }),
    ];
    expect(entries.map((entry) => entry.action)).toEqual([
      'webhook_endpoint.deleted',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.disabled',
    ]);
    expect(JSON.stringify(entries)).not.toContain('secret"');
    expect(JSON.stringify(entries)).not.toContain('"secret');
  });

  it('audits nothing for an endpoint that was not there or not disabled', () => {
    expect(endpointDeleted(null)).toEqual([]);
    expect(secretRotated(null)).toEqual([]);
    expect(endpointDisabled(null)).toEqual([]);
  });

  it('lets the next delivery of a line go only once this one is finished', () => {
    expect(attemptFollowUp('delivered')).toEqual({ promoteNext: true, endpointAnswered: true });
    expect(attemptFollowUp('failed')).toEqual({ promoteNext: true, endpointAnswered: false });
    expect(attemptFollowUp('retry')).toEqual({ promoteNext: false, endpointAnswered: false });
  });
});

describe('changedFields', () => {
  it('compares values as JSON, so equal arrays and objects are no change', () => {
    expect(changedFields({ a: [1, 2], b: { c: 1 }, d: 1 }, { a: [1, 2], b: { c: 1 }, d: 2 })).toEqual({
      d: { before: 1, after: 2 },
    });
  });
});

describe('request fingerprints', () => {
  const request = {
    method: 'PUT',
    route: '/api/user',
    params: {},
    query: { a: '1', b: '2' },
    body: { name: 'x', properties: { p: 1, q: [1, 2] } },
  };

  it('ignores the order of keys at any depth', () => {
    const reordered = { ...request, query: { b: '2', a: '1' }, body: { properties: { q: [1, 2], p: 1 }, name: 'x' } };
    expect(requestFingerprint(reordered)).toBe(requestFingerprint(request));
  });

  it('tells apart any difference of method, route, parameters, query, body or array order', () => {
    const variants = [
      { ...request, method: 'POST' },
      { ...request, route: '/api/user/verify' },
      { ...request, params: { id: '1' } },
      { ...request, query: { a: '1' } },
      { ...request, body: { ...request.body, properties: { p: 1, q: [2, 1] } } },
      { ...request, body: undefined },
    ];
    const fingerprints = new Set([request, ...variants].map(requestFingerprint));
    expect(fingerprints.size).toBe(variants.length + 1);
    expect(requestFingerprint(request)).toMatch(/^[0-9a-f]{64}$/);
  });
});
