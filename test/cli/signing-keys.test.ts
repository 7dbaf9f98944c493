// `ugs signing-keys list|rotate` against a real SQLite file (docs/api.md#embed-tokens): the keys that sign a
// workspace's embed tokens, rotated with overlap and audited as the CLI's.
import { afterEach, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/cli/context.js';
import { openRuntime } from '../../src/runtime.js';
import { cleanUp, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { CURRENT_KEY_HELD_MS } from '../../src/domain/signing-keys/signing-keys.service.js';

afterEach(cleanUp);

interface KeyRow {
  kid: string;
  created_at: string;
  retired_at: string | null;
  published_until: string | null;
}

describe('ugs signing-keys', () => {
  it('rotates: a new key first, the old one published for a day more; list shows both; audited', async () => {
    const box = sandbox();
    expect(await box.ugs('signing-keys', 'list')).toMatchObject({ code: 0, stdout: '(none)\n' });

    const first = jsonOutput<{ current: KeyRow; retired: KeyRow | null }>(
      await box.ugs('signing-keys', 'rotate', '--json'),
    );
    expect(first.retired).toBeNull();
    expect(first.current).toMatchObject({
      kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      retired_at: null,
      published_until: null,
    });

    const second = await box.ugs('signing-keys', 'rotate');
    expect(second.code).toBe(0);
    const [, newKid, oldKid, until] =
      /^signing with (\S+) from now on; (\S+) stays published until (\S+)\n$/.exec(second.stdout) ?? [];
    expect(oldKid).toBe(first.current.kid);
    const listed = jsonOutput<KeyRow[]>(await box.ugs('signing-keys', 'list', '--json'));
    expect(listed.map((key) => key.kid)).toEqual([newKid, oldKid]);
    expect(listed[1]).toMatchObject({ retired_at: expect.any(String), published_until: until });
    expect(Date.parse(until!) - Date.parse(listed[1]!.retired_at!)).toBe(86_400_000 + CURRENT_KEY_HELD_MS);

    const audit = jsonOutput<Array<{ action: string; actor: string; changes: unknown }>>(
      await box.ugs('audit', 'list', '--json'),
    );
    const rotations = audit.filter((event) => event.action.startsWith('signing_key.'));
    expect(rotations.map((event) => event.action).sort()).toEqual(['signing_key.created', 'signing_key.rotated']);
    expect(rotations.find((event) => event.action === 'signing_key.rotated')).toMatchObject({
      actor: 'cli',
      changes: { kid: { before: oldKid, after: newKid } },
    });
  });

  it("rotates and lists one environment's keys with --environment: Testing's rotation leaves Customer's key alone", async () => {
    const box = sandbox();
    const customer = jsonOutput<{ current: KeyRow }>(await box.ugs('signing-keys', 'rotate', '--json')).current;
    const testing = jsonOutput<{ current: KeyRow }>(
      await box.ugs('signing-keys', 'rotate', '--environment', 'Testing', '--json'),
    ).current;
    const rotated = jsonOutput<{ current: KeyRow; retired: KeyRow }>(
      await box.ugs('signing-keys', 'rotate', '--environment', 'Testing', '--json'),
    );
    expect(rotated.retired.kid).toBe(testing.kid);
    const list = async (...environment: string[]) =>
      jsonOutput<KeyRow[]>(await box.ugs('signing-keys', 'list', '--json', ...environment)).map((key) => key.kid);
    expect(await list()).toEqual([customer.kid]);
    expect(await list('--environment', 'Customer')).toEqual([customer.kid]);
    expect(await list('--environment', 'Testing')).toEqual([rotated.current.kid, testing.kid]);
    expectCleanFailure(
      await box.ugs('signing-keys', 'rotate', '--environment', 'Staging'),
      /--environment.*Staging|Staging.*--environment|Allowed choices/,
    );
  });

  it('refuses a rotation beyond 32 published keys, naming its code, unless --force, which drops the oldest', async () => {
    const box = sandbox();
    expect((await box.ugs('signing-keys', 'list')).code).toBe(0);
    const runtime = await openRuntime({ databaseUrl: box.databaseUrl, encryptionKey: undefined });
    try {
      const caller = await cliCaller(runtime, 'default');
      for (let rotation = 0; rotation < 32; rotation += 1) await runtime.services.signingKeys.rotate(caller);
    } finally {
      await runtime.close();
    }
    const oldest = jsonOutput<KeyRow[]>(await box.ugs('signing-keys', 'list', '--json')).at(-1)!;
    expectCleanFailure(await box.ugs('signing-keys', 'rotate'), /32.*\(signing_key_limit\)/s);
    const forced = await box.ugs('signing-keys', 'rotate', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(new RegExp(`^signing with \\S+ from now on; .*\ndropped ${oldest.kid}: `));
    const listed = jsonOutput<KeyRow[]>(await box.ugs('signing-keys', 'list', '--json'));
    expect(listed).toHaveLength(32);
    expect(listed.map((key) => key.kid)).not.toContain(oldest.kid);
  });

  it('refuses an unknown workspace', async () => {
    expectCleanFailure(
      await sandbox().ugs('signing-keys', 'rotate', '--workspace', 'nowhere'),
      /Workspace "nowhere" does not exist/,
    );
  });
});
