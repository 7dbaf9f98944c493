#!/usr/bin/env node
// `npm run release [-- --out <dir>]`: builds unless the build is up to date (scripts/build-freshness.js),
// then makes the versioned release in release/ (git-ignored), or in <dir>:
//   ugs-<version>.tgz          the package: dist/ (server and console), bin/ugs.js, README, LICENSE,
//                              its package.json and an npm-shrinkwrap.json locking every production
//                              dependency at the repository's versions (scripts/release-tree.js)
//   ugs-<version>.tgz.sha256   its checksum, as `sha256sum -c` reads it
//   ugs-<version>.cdx.json     its SBOM (CycloneDX), from npm over the shrinkwrapped tree
// `npm install --omit=dev ugs-<version>.tgz` (or `npm install -g`) installs it: nothing compiles but
// the SQLite binding, and `ugs serve` runs from dist/ as it is. The Dockerfile is built from it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isBuildFresh } from './build-freshness.js';
import { productionShrinkwrap, RELEASE_FILES, releaseManifest, shippedFromDist, tarballName } from './release-tree.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const { values: options } = parseArgs({ options: { out: { type: 'string', default: join(root, 'release') } } });
const out = resolve(options.out);
const readJson = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));

/** Runs a command to its end, its output passed through (or returned, with `capture`); exits on failure. */
function run(command, args, { cwd = root, capture = false } = {}) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] });
  if (result.status !== 0) {
    process.stderr.write(`npm run release: \`${command} ${args.join(' ')}\` failed\n`);
    process.exit(result.status ?? 1);
  }
  return capture ? result.stdout.toString('utf8') : '';
}

const manifest = readJson('package.json');
const name = tarballName(manifest.version);

// A build stamped as fresh is the same build again (and `npm test`'s release test then leaves the
// dist/ that other suites run from alone).
if (isBuildFresh(root)) process.stderr.write('npm run release: the build is up to date\n');
else run('npm', ['run', 'build', '--silent']);

const stage = join(out, 'stage');
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
for (const file of RELEASE_FILES) {
  const from = join(root, file);
  const filter = file === 'dist' ? (path) => shippedFromDist(relative(from, path)) : undefined;
  mkdirSync(dirname(join(stage, file)), { recursive: true });
  cpSync(from, join(stage, file), { recursive: true, filter });
}
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(releaseManifest(manifest), null, 2)}\n`);
writeFileSync(
  join(stage, 'npm-shrinkwrap.json'),
  `${JSON.stringify(productionShrinkwrap(readJson('package-lock.json'), manifest), null, 2)}\n`,
);

// The production tree, exactly as locked (npm ci refuses a shrinkwrap that does not match the
// manifest), bundled into the tarball; no install script runs here: the SQLite binding builds where
// the release is installed, for that machine's Node.
run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: stage });

const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, capture: true }));
const tarball = join(out, name);
renameSync(join(out, packed[0].filename), tarball);

const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
writeFileSync(`${tarball}.sha256`, `${sha256}  ${name}\n`);

const sbom = run('npm', ['sbom', '--sbom-format', 'cyclonedx', '--sbom-type', 'application', '--omit=dev'], {
  cwd: stage,
  capture: true,
});
writeFileSync(join(out, name.replace(/\.tgz$/, '.cdx.json')), sbom);
rmSync(stage, { recursive: true, force: true });

const kib = (bytes) => `${Math.round(bytes / 1024)} KiB`;
const shown = relative(process.cwd(), tarball).startsWith('..') ? tarball : relative(process.cwd(), tarball);
process.stdout.write(
  `${shown}: ${kib(statSync(tarball).size)}, ${packed[0].entryCount} files, sha256 ${sha256}\n` +
    `install: npm install --omit=dev ${shown} (or npm install -g), then ugs serve\n`,
);
