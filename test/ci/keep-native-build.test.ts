// .ci/keep-native-build: keeps better-sqlite3's compiled module under the release asset's name that
// prebuild-install looks for in a local prebuilds folder, once per Node ABI, and never half a file.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../.ci/keep-native-build', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ugs-keep-native-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A checkout whose better-sqlite3 (version 9.9.9) holds a compiled module, or none. */
function checkout(name: string, compiled: boolean): string {
  const dir = join(scratch, name);
  const pkg = join(dir, 'node_modules', 'better-sqlite3');
  mkdirSync(join(pkg, 'build', 'Release'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: '9.9.9' }));
  if (compiled) writeFileSync(join(pkg, 'build', 'Release', 'better_sqlite3.node'), 'compiled module');
  return dir;
}

describe('.ci/keep-native-build', () => {
  const asset = `better-sqlite3-v9.9.9-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;

  it('keeps the module as prebuild-install names it, with build/Release inside, once', async () => {
    const cache = join(scratch, 'cache');
    const cwd = checkout('compiled', true);
    await exec('bash', [SCRIPT, cache], { cwd });
    expect(readdirSync(cache)).toEqual([asset]);
    const { stdout } = await exec('tar', ['-tzf', join(cache, asset)]);
    expect(stdout.trim()).toBe('build/Release/better_sqlite3.node');
    const kept = statSync(join(cache, asset)).mtimeMs;
    await exec('bash', [SCRIPT, cache], { cwd });
    expect(statSync(join(cache, asset)).mtimeMs).toBe(kept);
    expect(readdirSync(cache)).toEqual([asset]);
  });

  it('fails, keeping nothing, when there is no compiled module', async () => {
    const cache = join(scratch, 'empty-cache');
    await expect(exec('bash', [SCRIPT, cache], { cwd: checkout('uncompiled', false) })).rejects.toMatchObject({
      stderr: expect.stringContaining('no node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
    });
    expect(() => readdirSync(cache)).toThrow();
  });
});
