// `ugs signing-keys list|rotate` against a real SQLite file (SPEC §10): the keys that sign a
// workspace's embed tokens, rotated with overlap and audited as the CLI's.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, expectCleanFailure, jsonOutput, sandbox } from './helpers.js';

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
    expect(Date.parse(until!) - Date.parse(listed[1]!.retired_at!)).toBe(86_400_000);

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

  it('refuses an unknown workspace', async () => {
    expectCleanFailure(
      await sandbox().ugs('signing-keys', 'rotate', '--workspace', 'nowhere'),
      /Workspace "nowhere" does not exist/,
    );
  });
});
