import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/test-app.js';
import { typeEscapesIn, useScratchProject } from '../support/typescript-program.js';

const PROGRAM = join(import.meta.dirname, 'generated-client.program.ts');

/**
 * A client generated from the live /openapi.json (openapi-typescript's types, openapi-fetch's
 * calls) is enough to write the usual calls without a cast, and they work against a real server
 * over a real socket.
 */
describe('a client generated from /openapi.json', () => {
  const app = useTestApp();
  // The scratch project resolves openapi-fetch, TypeScript's Node types and tsx from the repository's.
  const scratch = useScratchProject('ugs-openapi-client-', { 'program.ts': PROGRAM });

  it('is written without a cast or an any', () => {
    expect(typeEscapesIn(readFileSync(PROGRAM, 'utf8'))).toEqual([]);
  });

  it('type-checks (strict) against the types generated from the live document, then runs against the server', async () => {
    const { t } = app;
    const { project } = scratch;
    const baseUrl = await t.listen();
    const live = await fetch(`${baseUrl}/openapi.json`);
    expect(live.status).toBe(200);
    writeFileSync(join(project.dir, 'openapi.json'), await live.text());
    await project.run('openapi-typescript', ['openapi.json', '-o', 'openapi-types.ts']);
    // Rejects, with the compiler's messages, on any type error.
    await project.run('tsc', ['-p', 'tsconfig.json']);

    const { stdout } = await project.run('tsx', ['program.ts'], {
      UGS_URL: baseUrl,
      UGS_TOKEN: t.tokens.default.Customer.admin,
    });
    const result = JSON.parse(stdout);
    expect(result).toEqual({
      created: { new_user_group: true, is_demo_group: true, tags: ['generated'] },
      properties: { plan: 'pro' },
      updatedName: 'Generated client, renamed',
      rotated: true,
      verifiedTeamId: result.teamId,
      staleTokenStatus: 404,
      staleTokenCode: 'user_group_not_found',
      listedProvidedIds: ['generated-client-group'],
      auditActions: expect.arrayContaining(['user_group.created', 'user_group.updated', 'user_group.token_rotated']),
      deleted: 1,
      goneCode: 'user_group_not_found',
      teamId: expect.any(Number),
    });
  }, 180_000); // generating, compiling and running a program: seconds each on a busy machine
});
