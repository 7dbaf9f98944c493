// `ugs embed-tokens introspect|refresh` against a real SQLite file (docs/cli.md#embed-tokens-introspect-and-refresh): what a token claims and
// whether it is valid now at an issuer, and a session's refresh, from the operator's command line.
import { afterEach, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/cli/context.js';
import { openRuntime } from '../../src/runtime.js';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterEach(cleanUp);

/** Mints through the services, as a backend would through the API. */
async function minted(box: Sandbox, input: { singleUse?: boolean; sessionSeconds?: number }): Promise<string> {
  const runtime = await openRuntime({ databaseUrl: box.databaseUrl, encryptionKey: undefined });
  try {
    const caller = await cliCaller(runtime, 'default');
    await runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: 'acme' });
    return (await runtime.services.embedTokens.mint(caller, { userGroupId: 'acme', ...input })).embedToken;
  } finally {
    await runtime.close();
  }
}

describe('ugs embed-tokens', () => {
  it('introspects: active with claims at its issuer, inactive at the other; a single-use token once', async () => {
    const box = sandbox();
    expect((await box.ugs('migrate')).code).toBe(0);
    const token = await minted(box, {});
    const answer = jsonOutput<{ active: boolean; sub: string; ugs: { team_id: number } }>(
      await box.ugs('embed-tokens', 'introspect', token, '--json'),
    );
    expect(answer).toMatchObject({ active: true, sub: 'acme', token_type: 'ugs-embed+jwt' });
    expect(await box.ugs('embed-tokens', 'introspect', token, '--environment', 'Testing')).toMatchObject({
      code: 0,
      stdout: 'inactive\n',
    });

    const once = await minted(box, { singleUse: true });
    const first = await box.ugsWithStdin(`${once}\n`, 'embed-tokens', 'introspect', '-');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^active: acme \(team \d+\), audience ugs-embed, expires \S+, single use \(now consumed\)\n$/,
    );
    expect((await box.ugs('embed-tokens', 'introspect', once)).stdout).toBe('inactive\n');
  });

  it("refreshes a session's token, and refuses one without a session", async () => {
    const box = sandbox();
    expect((await box.ugs('migrate')).code).toBe(0);
    const token = await minted(box, { sessionSeconds: 600 });
    const refreshed = jsonOutput<{ embed_token: string; session_ends_at: string }>(
      await box.ugs('embed-tokens', 'refresh', token, '--json'),
    );
    expect(refreshed.embed_token).not.toBe(token);
    expect(refreshed.session_ends_at).toEqual(expect.any(String));
    expectCleanFailure(await box.ugs('embed-tokens', 'refresh', await minted(box, {})), /\(embed_session_ended\)/);
  });
});
