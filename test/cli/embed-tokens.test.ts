// `ugs embed-tokens revoke` against a real SQLite file: one token, or every current token of a group,
// refused by online verify at once and listed in the issuer's revocation document; audited as the CLI's.
import { afterEach, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/cli/context.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterEach(cleanUp);

/** Runs `work` on the sandbox's database through the services, as the CLI's own caller. */
async function withServices<R>(box: Sandbox, work: (runtime: Runtime) => Promise<R>): Promise<R> {
  const runtime = await openRuntime({ databaseUrl: box.databaseUrl, encryptionKey: undefined });
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

describe('ugs embed-tokens revoke', () => {
  it('revokes one token with --token and a group’s every current token with --group; audited', async () => {
    const box = sandbox();
    expect((await box.ugs('signing-keys', 'list')).code).toBe(0);
    const [one, other, groupToken] = await withServices(box, async (runtime) => {
      const caller = await cliCaller(runtime, 'default');
      await runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: 'acme' });
      const mint = async () => (await runtime.services.embedTokens.mint(caller, { userGroupId: 'acme' })).embedToken;
      return [await mint(), await mint(), await mint()];
    });

    const revoked = jsonOutput<{ user_group_id: string; jti: string }>(
      await box.ugs('embed-tokens', 'revoke', '--token', one!, '--json'),
    );
    expect(revoked).toEqual({ user_group_id: 'acme', jti: expect.stringMatching(/^0\./) });
    await withServices(box, async (runtime) => {
      const caller = await cliCaller(runtime, 'default');
      await expect(runtime.services.embedTokens.verify(caller, one!)).rejects.toMatchObject({
        code: 'user_group_not_found',
      });
      expect((await runtime.services.embedTokens.verify(caller, other!)).userGroup.providedId).toBe('acme');
    });

    const all = await box.ugs('embed-tokens', 'revoke', '--group', 'acme');
    expect(all).toMatchObject({ code: 0, stdout: 'revoked every embed token of acme minted until now\n' });
    await withServices(box, async (runtime) => {
      const caller = await cliCaller(runtime, 'default');
      for (const token of [other!, groupToken!])
        await expect(runtime.services.embedTokens.verify(caller, token)).rejects.toMatchObject({
          code: 'user_group_not_found',
        });
      const { body } = await runtime.services.embedTokenRevocations.published('default', 'Customer');
      const document = JSON.parse(body) as { groups: unknown[]; tokens: unknown[] };
      expect([document.groups.length, document.tokens.length]).toEqual([1, 1]);
    });

    const audit = jsonOutput<Array<{ action: string; actor: string }>>(await box.ugs('audit', 'list', '--json'));
    expect(audit.filter((event) => event.action === 'embed_token.revoked').map((event) => event.actor)).toEqual([
      'cli',
      'cli',
    ]);
  });

  it('refuses neither or both of --token and --group, and a group that does not exist', async () => {
    const box = sandbox();
    expectCleanFailure(await box.ugs('embed-tokens', 'revoke'), /--group or --token/);
    expectCleanFailure(await box.ugs('embed-tokens', 'revoke', '--group', 'a', '--token', 'b'), /--group or --token/);
    expectCleanFailure(await box.ugs('embed-tokens', 'revoke', '--group', 'nobody'), /user_group_not_found/);
  });
});
