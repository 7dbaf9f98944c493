import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMITTED_OPENAPI } from '../../scripts/openapi-document.js';
import { useTestApp } from '../support/test-app.js';
import { typeEscapesIn, useScratchProject } from '../support/typescript-program.js';
import type { ScenarioOutcome } from './scenario.js';

// One program per generated client, each doing ./scenario.ts's calls through it.
const PROGRAMS = ['hey-api', 'orval-fetch', 'orval-axios'] as const;
const programFile = (name: string) => join(import.meta.dirname, `${name}.program.ts`);

// orval's configuration, as in docs/api.md: its clients in one file each; its fetch client reads the
// base URL at run time (its `fetch` calls need an absolute URL).
const ORVAL_CONFIG = `export default {
  fetch: {
    input: './openapi.json',
    output: { target: './orval-fetch/ugs.ts', client: 'fetch', baseUrl: { runtime: 'process.env.UGS_URL' } },
  },
  axios: { input: './openapi.json', output: { target: './orval-axios/ugs.ts', client: 'axios' } },
};
`;

/**
 * Clients generated from the committed openapi.json, with no server, by generators the repository
 * does not otherwise use (@hey-api/openapi-ts; orval's fetch and axios clients), at the versions
 * package.json pins: the programs call get-or-create (with mapping, properties and tags), update,
 * rotate, verify, delete, mint and every admin list (groups, audit events, data sources, schemas, API
 * tokens, signing keys, webhook endpoints and deliveries, a group's usage, the top usage) with what
 * the generators made alone (no cast, no serializer, no header fix), type-checked (strict) and run
 * against a live server over a socket.
 */
describe('clients generated from openapi.json by @hey-api/openapi-ts and orval', () => {
  const app = useTestApp();
  const scratch = useScratchProject('ugs-generators-', {
    'openapi.json': COMMITTED_OPENAPI,
    'scenario.ts': join(import.meta.dirname, 'scenario.ts'),
    ...Object.fromEntries(PROGRAMS.map((name) => [`${name}.program.ts`, programFile(name)])),
  });

  it('are used without a cast, an any, a serializer or a header fix', () => {
    for (const name of ['scenario', ...PROGRAMS.map((program) => `${program}.program`)]) {
      const code = readFileSync(join(import.meta.dirname, `${name}.ts`), 'utf8');
      expect(typeEscapesIn(code), name).toEqual([]);
      // Nothing encodes a query or a body, or sends a header the generated client should have.
      expect(code, name).not.toMatch(
        /querySerializer|paramsSerializer|bodySerializer|URLSearchParams|encodeURI|interceptors|Explo-Authorization/i,
      );
    }
    // hey-api's client sends the token itself (its `auth`, from the security scheme); orval's leave
    // authentication to the caller: one Authorization header, given once.
    expect(readFileSync(programFile('hey-api'), 'utf8')).not.toMatch(/headers|Authorization/);
    for (const name of ['orval-fetch', 'orval-axios'])
      expect(readFileSync(programFile(name), 'utf8').match(/Authorization/g), name).toHaveLength(1);
  });

  it('type-check (strict) against what the generators made, then do every call against the server', async () => {
    const { t } = app;
    const { project } = scratch;
    const baseUrl = await t.listen();
    writeFileSync(join(project.dir, 'orval.config.mjs'), ORVAL_CONFIG);
    await Promise.all([
      project.run('openapi-ts', ['-i', 'openapi.json', '-o', 'hey-api', '-c', '@hey-api/client-fetch']),
      project.run('orval', ['--config', 'orval.config.mjs']),
    ]);
    // One compiler run for the three programs and the clients they import; rejects with its messages.
    await project.run('tsc', ['-p', 'tsconfig.json']);

    const outcomes = await Promise.all(
      PROGRAMS.map(async (name) => {
        const { stdout } = await project.run('tsx', [`${name}.program.ts`], {
          UGS_URL: baseUrl,
          UGS_TOKEN: t.tokens.default.Customer.admin,
          UGS_GROUP_ID: `generated-${name}`,
        });
        return [name, JSON.parse(stdout) as ScenarioOutcome] as const;
      }),
    );
    for (const [name, outcome] of outcomes) {
      // One entry, schema id to data source id, which the group's mapping must be.
      expect(Object.keys(outcome.expectedMapping), name).toHaveLength(1);
      expect(outcome, name).toEqual({
        created: true,
        createdAgain: false,
        sameGroup: true,
        isDemoGroup: true,
        tags: ['generated', name],
        properties: { plan: 'pro', seats: 5, regions: ['emea'] },
        mapping: outcome.expectedMapping,
        expectedMapping: outcome.expectedMapping,
        updatedName: 'Renamed',
        updatedTags: ['renamed'],
        rotated: true,
        verifiedSameGroup: true,
        embedExpiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        embedVerified: true,
        listedIds: [`generated-${name}`],
        auditActions: expect.arrayContaining(['user_group.created', 'user_group.updated', 'user_group.token_rotated']),
        dataSourceListed: true,
        schemaListed: true,
        adminTokenListed: true,
        signingKeyListed: true,
        webhookEndpointCount: 0,
        failedDeliveries: { count: 0, nextCursor: null },
        usage: { userGroupId: `generated-${name}`, days: 30 },
        topUsageMetric: 'verifications',
        deleted: 1,
        goneStatus: 404,
        goneCode: 'user_group_not_found',
      });
    }
  }, 300_000); // three generators, one compiler run and three programs: tens of seconds on a busy machine
});
