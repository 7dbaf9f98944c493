// `ugs keys generate|list|rotate|prune` against real SQLite files: the key file (rotate writes a new
// key first and keeps the old ones; prune drops them once unused), keys from UGS_ENCRYPTION_KEY,
// and the tokens staying exactly what they were. Rotation under load: test/scale/key-rotation.test.ts.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, importGroups, type Sandbox, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput, type RunResult, runUgs } from '../support/ugs-command.js';
import { getOrCreate } from '../support/user-group-api.js';
import { keyIdOf, newKey } from '../support/encryption-keys.js';

afterEach(cleanUp);

interface KeyRow {
  key_id: string;
  current: boolean;
  configured: boolean;
  user_group_tokens: number;
  idempotent_responses: number;
  signing_keys: number;
  webhook_secrets: number;
  webhook_previous_secrets: number;
}

interface RotateSummary {
  key_id: string;
  key_generated: boolean;
  re_encrypted: {
    user_group_tokens: number;
    idempotent_responses: number;
    signing_keys: number;
    webhook_secrets: number;
    webhook_previous_secrets: number;
  };
  passes: number;
  remaining: KeyRow[];
}

interface StoredGroup {
  provided_id: string;
  environment: string;
  token_ciphertext: string;
  version: number;
  updated_at: string;
}

const token = () => `ugt_${randomBytes(32).toString('hex')}`;

const ugsWith = (box: Sandbox, env: Record<string, string>, ...args: string[]): Promise<RunResult> =>
  box.ugsWith(env, ...args);

const keyFileOf = (box: Sandbox) => `${box.databasePath}.key`;
const keyFileIds = (box: Sandbox) => readFileSync(keyFileOf(box), 'utf8').trim().split('\n').map(keyIdOf);

function storedGroups(box: Sandbox): StoredGroup[] {
  const db = new Database(box.databasePath, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        'SELECT provided_id, environment, token_ciphertext, version, updated_at FROM user_groups ORDER BY team_id',
      )
      .all() as StoredGroup[];
  } finally {
    db.close();
  }
}

/** The key id of every stored token's ciphertext (`v1.<key id>.…`), as a set. */
const keyIdsInUse = (box: Sandbox) => [
  ...new Set(storedGroups(box).map((group) => group.token_ciphertext.split('.')[1])),
];

/** Each group's token as `ugs groups export --include-tokens` shows it, by environment/provided id. */
async function exportedTokens(box: Sandbox, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const result = await ugsWith(box, env, 'groups', 'export', '--include-tokens');
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { api_environment_tag: string; provided_id: string; token: string });
  return Object.fromEntries(lines.map((group) => [`${group.api_environment_tag}/${group.provided_id}`, group.token]));
}

/** Five Customer and three Testing groups with tokens of our own; returns them by environment/provided id. */
async function seedGroups(box: Sandbox, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const groups = [
    ...Array.from({ length: 5 }, (_, i) => ({
      provided_id: `c${i}`,
      name: `C ${i}`,
      api_environment_tag: 'Customer',
      token: token(),
    })),
    ...Array.from({ length: 3 }, (_, i) => ({
      provided_id: `t${i}`,
      name: `T ${i}`,
      api_environment_tag: 'Testing',
      token: token(),
    })),
  ];
  if (Object.keys(env).length === 0) {
    expect(await importGroups(box, groups)).toMatchObject({ created: 8, rejected: [] });
  } else {
    const file = `${box.dir}/seed.jsonl`;
    writeFileSync(file, groups.map((group) => JSON.stringify(group)).join('\n'));
    expect(jsonOutput(await ugsWith(box, env, 'groups', 'import', file, '--json'))).toMatchObject({
      created: 8,
      rejected: [],
    });
  }
  return Object.fromEntries(groups.map((group) => [`${group.api_environment_tag}/${group.provided_id}`, group.token]));
}

describe('ugs keys rotate with the key file', () => {
  it('puts a new key first, keeps the old one, and re-encrypts every token under it without changing any group', async () => {
    const box = sandbox();
    const tokens = await seedGroups(box);
    // A webhook endpoint whose secret was rotated: its secret and the previous one are ciphertexts too.
    const endpoint = jsonOutput<{ id: number }>(
      await box.ugs('webhooks', 'create', '--url', 'http://127.0.0.1:9/hooks', '--webhook-allow-private', '--json'),
    );
    expect((await box.ugs('webhooks', 'rotate-secret', String(endpoint.id), '--json')).code).toBe(0);
    const [oldKeyId] = keyFileIds(box);
    const before = storedGroups(box);
    expect(keyIdsInUse(box)).toEqual([oldKeyId]);

    const rotated = await box.ugs('keys', 'rotate', '--json');
    const summary = jsonOutput<RotateSummary>(rotated);
    expect(summary).toEqual({
      key_id: expect.stringMatching(/^[0-9a-f]{8}$/),
      key_generated: true,
      re_encrypted: {
        user_group_tokens: 8,
        idempotent_responses: 0,
        signing_keys: 0,
        webhook_secrets: 1,
        webhook_previous_secrets: 1,
      },
      passes: expect.any(Number),
      remaining: [],
    });
    expect(summary.key_id).not.toBe(oldKeyId);
    expect(rotated.stderr).toContain(`new key ${summary.key_id} is first in ${keyFileOf(box)}`);

    expect(keyFileIds(box)).toEqual([summary.key_id, oldKeyId]);
    expect(statSync(keyFileOf(box)).mode & 0o777).toBe(0o600);
    expect(readdirSync(box.dir).filter((name) => name.includes('.key'))).toEqual(['ugs.db.key']);
    expect(keyIdsInUse(box)).toEqual([summary.key_id]);
    // Not a change of any group: same versions and update times, each ciphertext new.
    const after = storedGroups(box);
    expect(after.map(({ token_ciphertext: _, ...group }) => group)).toEqual(
      before.map(({ token_ciphertext: _, ...group }) => group),
    );
    after.forEach((group, index) => expect(group.token_ciphertext).not.toBe(before[index]!.token_ciphertext));
    expect(await exportedTokens(box)).toEqual(tokens);

    const list = jsonOutput<KeyRow[]>(await box.ugs('keys', 'list', '--json'));
    expect(list).toEqual([
      {
        key_id: summary.key_id,
        current: true,
        configured: true,
        user_group_tokens: 8,
        idempotent_responses: 0,
        signing_keys: 0,
        webhook_secrets: 1,
        webhook_previous_secrets: 1,
      },
      {
        key_id: oldKeyId,
        current: false,
        configured: true,
        user_group_tokens: 0,
        idempotent_responses: 0,
        signing_keys: 0,
        webhook_secrets: 0,
        webhook_previous_secrets: 0,
      },
    ]);
  });

  it('writes one audit event for the run, in workspace default, and none per group', async () => {
    const box = sandbox();
    await seedGroups(box);
    const [oldKeyId] = keyFileIds(box);
    const events = async () =>
      jsonOutput<Array<{ action: string }>>(await box.ugs('audit', 'list', '--limit', '1000', '--json'));
    const before = (await events()).length;

    const summary = jsonOutput<RotateSummary>(await box.ugs('keys', 'rotate', '--json'));
    const all = await events();
    expect(all.length - before).toBe(1);
    expect(all[0]).toMatchObject({
      action: 'encryption_key.rotated',
      actor: 'cli',
      environment: null,
      team_id: null,
      changes: { key_ids_in_use: { before: [oldKeyId], after: [summary.key_id] } },
    });
  });

  it('serves every token unchanged afterwards: get-or-create returns it and verify finds its group', async () => {
    const box = sandbox();
    const tokens = await seedGroups(box);
    expect(jsonOutput<RotateSummary>(await box.ugs('keys', 'rotate', '--json')).remaining).toEqual([]);

    const server = await box.serve();
    const admin = server.adminTokens();
    for (const [key, groupToken] of Object.entries(tokens)) {
      const [environment, providedId] = key.split('/') as ['Customer' | 'Testing', string];
      const got = await getOrCreate(server, admin[environment], { user_group_id: providedId });
      expect(got.body, got.raw).toMatchObject({ success: 1, new_user_group: false, user_group: { token: groupToken } });
      const verified = await server.request({
        method: 'POST',
        path: '/api/user/verify',
        token: admin[environment],
        body: { token: groupToken },
      });
      expect(verified.body, verified.raw).toMatchObject({ success: 1, user_group: { provided_id: providedId } });
    }
  });

  it('rotates an empty database too, and says so', async () => {
    const box = sandbox();
    const rotated = await box.ugs('keys', 'rotate');
    expect(rotated.code, rotated.stderr).toBe(0);
    const [current] = keyFileIds(box);
    expect(rotated.stdout).toBe(`re-encrypted 0 tokens; all tokens are under key ${current}\n`);
    expect(keyFileIds(box)).toHaveLength(2);
  });

  it('refuses an unknown --workspace before it touches the key file', async () => {
    const box = sandbox();
    await seedGroups(box);
    const keyFile = readFileSync(keyFileOf(box), 'utf8');
    expectCleanFailure(await box.ugs('keys', 'rotate', '--workspace', 'nope'), /Workspace "nope" does not exist/);
    expect(readFileSync(keyFileOf(box), 'utf8')).toBe(keyFile);
  });
});

describe('ugs keys prune with the key file', () => {
  it('refuses while tokens are under an old key, then removes the old keys once rotate has moved everything', async () => {
    const box = sandbox();
    const tokens = await seedGroups(box);
    const original = readFileSync(keyFileOf(box), 'utf8');
    const [firstKeyId] = keyFileIds(box);
    // An operator put a new key first by hand: nothing has moved to it yet.
    const added = newKey();
    writeFileSync(keyFileOf(box), `${added}\n${original}`);

    const refused = await box.ugs('keys', 'prune');
    expectCleanFailure(
      refused,
      new RegExp(
        `still encrypted under ${firstKeyId} \\(8 tokens\\): run ugs keys rotate first\\. Nothing was removed\\.`,
      ),
    );
    expect(readFileSync(keyFileOf(box), 'utf8')).toBe(`${added}\n${original}`);

    const summary = jsonOutput<RotateSummary>(await box.ugs('keys', 'rotate', '--json'));
    expect(keyFileIds(box)).toEqual([summary.key_id, keyIdOf(added), firstKeyId]);

    const pruned = jsonOutput<{ removed: string[]; kept: string[] }>(await box.ugs('keys', 'prune', '--json'));
    expect(pruned).toEqual({ removed: [keyIdOf(added), firstKeyId], kept: [summary.key_id] });
    expect(keyFileIds(box)).toEqual([summary.key_id]);
    expect(statSync(keyFileOf(box)).mode & 0o777).toBe(0o600);
    expect(await exportedTokens(box)).toEqual(tokens);

    const again = await box.ugs('keys', 'prune');
    expect(again).toMatchObject({
      code: 0,
      stdout: `nothing to prune: ${keyFileOf(box)} holds only key ${summary.key_id}\n`,
    });
  });
});

describe('keys from UGS_ENCRYPTION_KEY', () => {
  it('rotate re-encrypts everything under the first configured key, generating nothing and writing no key file', async () => {
    const box = sandbox();
    const [oldKey, currentKey] = [newKey(), newKey()];
    const tokens = await seedGroups(box, { UGS_ENCRYPTION_KEY: oldKey });
    const both = { UGS_ENCRYPTION_KEY: `${currentKey},${oldKey}` };

    expect(jsonOutput<KeyRow[]>(await ugsWith(box, both, 'keys', 'list', '--json'))).toEqual([
      {
        key_id: keyIdOf(currentKey),
        current: true,
        configured: true,
        user_group_tokens: 0,
        idempotent_responses: 0,
        signing_keys: 0,
        webhook_secrets: 0,
        webhook_previous_secrets: 0,
      },
      {
        key_id: keyIdOf(oldKey),
        current: false,
        configured: true,
        user_group_tokens: 8,
        idempotent_responses: 0,
        signing_keys: 0,
        webhook_secrets: 0,
        webhook_previous_secrets: 0,
      },
    ]);
    const stillUsed = await ugsWith(box, both, 'keys', 'prune');
    expect(stillUsed.code).toBe(1);
    expect(stillUsed.stdout).toContain(`still in use: ${keyIdOf(oldKey)} (8 tokens): run ugs keys rotate first`);

    const rotated = await ugsWith(box, both, 'keys', 'rotate');
    expect(rotated).toMatchObject({
      code: 0,
      stdout: `re-encrypted 8 tokens; all tokens are under key ${keyIdOf(currentKey)}\n`,
    });
    expect(keyIdsInUse(box)).toEqual([keyIdOf(currentKey)]);
    expect(readdirSync(box.dir).filter((name) => name.includes('.key'))).toEqual([]);
    // The old key is no longer needed to read anything.
    expect(await exportedTokens(box, { UGS_ENCRYPTION_KEY: currentKey })).toEqual(tokens);

    const prunable = await ugsWith(box, both, 'keys', 'prune', '--json');
    expect(prunable.code).toBe(0);
    expect(JSON.parse(prunable.stdout)).toEqual({ removable: [keyIdOf(oldKey)], still_used: [] });
  });

  it('rotate reports tokens under a key that is not configured, re-encrypts the rest, and exits 2', async () => {
    const box = sandbox();
    const [lostKey, currentKey] = [newKey(), newKey()];
    await seedGroups(box, { UGS_ENCRYPTION_KEY: lostKey });
    const rotated = await ugsWith(box, { UGS_ENCRYPTION_KEY: currentKey }, 'keys', 'rotate');
    expect(rotated.code).toBe(2);
    expect(rotated.stdout).toBe(
      `re-encrypted 0 tokens; still under other keys than ${keyIdOf(currentKey)}: ${keyIdOf(lostKey)} (8 tokens, not configured)\n`,
    );
    expect(rotated.stderr).toMatch(/under keys that are not configured: add those keys/);
    expect(keyIdsInUse(box)).toEqual([keyIdOf(lostKey)]);
  });

  it('serve and every other command refuse a database with tokens under a key they lack, naming the key ids; keys list, rotate and prune still run', async () => {
    const box = sandbox();
    const [lostKey, otherKey] = [newKey(), newKey()];
    await seedGroups(box, { UGS_ENCRYPTION_KEY: lostKey });
    const refusal = new RegExp(
      `key ${keyIdOf(lostKey)} \\(8 ciphertexts\\), which the configured keys \\(${keyIdOf(otherKey)}\\) do not include`,
    );
    for (const args of [
      ['serve', '--port', '0'],
      ['groups', 'list'],
      ['schemas', 'list'],
    ]) {
      expectCleanFailure(await ugsWith(box, { UGS_ENCRYPTION_KEY: otherKey }, ...args), refusal);
    }
    // The key file beside the database holds another key as well.
    expectCleanFailure(await box.ugs('groups', 'list'), new RegExp(`key ${keyIdOf(lostKey)} \\(8 ciphertexts\\)`));
    for (const args of [
      ['keys', 'list'],
      ['keys', 'prune'],
    ])
      expect((await ugsWith(box, { UGS_ENCRYPTION_KEY: otherKey }, ...args)).code, args.join(' ')).toBe(0);
    // With the key it was written with, all is well again.
    expect((await ugsWith(box, { UGS_ENCRYPTION_KEY: `${otherKey},${lostKey}` }, 'groups', 'list')).code).toBe(0);
  });

  it.each([
    [
      'a key listed twice',
      (key: string) => `${key},${key}`,
      /UGS_ENCRYPTION_KEY: key 2 of 2 is the same key as key 1 of 2/,
    ],
    [
      'a key that is not 32 bytes',
      (key: string) => `${key},${randomBytes(16).toString('base64')}`,
      /UGS_ENCRYPTION_KEY, key 2 of 2, must be the base64 encoding of exactly 32 bytes/,
    ],
  ])('every command refuses %s with a clear message', async (_label, value, message) => {
    const box = sandbox();
    for (const args of [
      ['keys', 'list'],
      ['keys', 'rotate'],
      ['groups', 'list'],
    ]) {
      expectCleanFailure(await ugsWith(box, { UGS_ENCRYPTION_KEY: value(newKey()) }, ...args), message);
    }
  });
});

describe('ugs keys', () => {
  it('generate prints a new random 32-byte key, alone or with its id', async () => {
    const [plain, json] = await Promise.all([runUgs(['keys', 'generate']), runUgs(['keys', 'generate', '--json'])]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(Buffer.from(plain.stdout.trim(), 'base64')).toHaveLength(32);
    const generated = jsonOutput<{ key: string; key_id: string }>(json);
    expect(generated.key_id).toBe(keyIdOf(generated.key));
    expect(generated.key).not.toBe(plain.stdout.trim());
  });

  it('a bad line in the key file stops every command with a message naming the file and the line', async () => {
    const box = sandbox();
    writeFileSync(keyFileOf(box), `${newKey()}\nnot a key\n`);
    for (const args of [
      ['keys', 'list'],
      ['keys', 'prune'],
      ['groups', 'list'],
    ]) {
      expectCleanFailure(
        await box.ugs(...args),
        new RegExp(`${keyFileOf(box)}, line 2, must be the base64 encoding of exactly 32 bytes`),
      );
    }
  });

  it('list shows a key id found in the data that no configured key has', async () => {
    const box = sandbox();
    const lostKey = newKey();
    await seedGroups(box, { UGS_ENCRYPTION_KEY: lostKey });
    // A key file is never made beside a database that exists: the operator puts one there.
    writeFileSync(`${box.databasePath}.key`, `${newKey()}\n`, { mode: 0o600 });
    const list = await box.ugs('keys', 'list');
    const [current] = keyFileIds(box);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout.split('\n')).toEqual([
      'key_id    current  configured  user_group_tokens  idempotent_responses  signing_keys  webhook_secrets  webhook_previous_secrets',
      `${current}  true     true        0                  0                     0             0                0`,
      `${keyIdOf(lostKey)}  false    false       8                  0                     0             0                0`,
      '',
    ]);
  });
});
