// What `npm run release` (scripts/release.js) puts into the release: the files, the package.json it
// installs as, and its npm-shrinkwrap.json. Pure functions of the repository's package.json and
// package-lock.json, so a test can check them without building anything.

/** The release's files besides package.json and npm-shrinkwrap.json, as they sit in the repository. */
export const RELEASE_FILES = ['dist', 'bin/ugs.js', 'LICENSE', 'README.md'];

/**
 * Which files of dist/ the release leaves out: source maps (they point at src/, which a release does
 * not carry) and the build stamp (only `npm start` in a checkout reads it; a release never builds).
 */
export function shippedFromDist(relativePath) {
  return !relativePath.endsWith('.map') && !/(^|\/)\.build-stamp/.test(relativePath);
}

/** The release's file name: `ugs-<version>.tgz`. */
export const tarballName = (version) => `ugs-${version}.tgz`;

/**
 * The release's package.json: the repository's without what only a checkout uses. No scripts (a
 * release builds nothing, and installing it runs none of its own), no devDependencies and no
 * workspaces (the client library is a separate package; the console has it bundled). Every
 * production dependency is bundled: npm honours a dependency's npm-shrinkwrap.json only when a
 * registry says the package has one, never for a tarball installed from a file or URL, so the
 * locked tree travels inside the tarball itself, and installing it fetches nothing.
 */
export function releaseManifest(manifest) {
  const kept = { ...manifest };
  for (const checkoutOnly of ['scripts', 'devDependencies', 'workspaces']) delete kept[checkoutOnly];
  return {
    ...kept,
    files: [...RELEASE_FILES, 'npm-shrinkwrap.json'],
    bundleDependencies: Object.keys(manifest.dependencies ?? {}),
  };
}

/** Where Node finds `dependency` from the package installed at `from` (a lockfile key, '' for the root). */
function resolve(packages, from, dependency) {
  for (let at = from; ;) {
    const key = `${at === '' ? '' : `${at}/`}node_modules/${dependency}`;
    if (packages[key]) return key;
    if (at === '') return undefined;
    const nested = at.lastIndexOf('/node_modules/');
    at = nested === -1 ? '' : at.slice(0, nested);
  }
}

/** What a package needs installed beside it: its dependencies, its optional ones, its required peers. */
function needs(entry) {
  const optionalPeer = (name) => entry.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => !optionalPeer(name))
      .map((name) => ({ name, optional: false })),
  ];
}

/**
 * The npm-shrinkwrap.json of the release: the lockfile's packages that the production dependencies
 * reach, found as Node resolves them (nearest node_modules first), at the versions and integrity the
 * repository locked. npm ignores a package-lock.json inside a package but honours a shrinkwrap, so
 * an install of the release gets exactly these. Reached from the root's dependencies alone, it holds
 * no devDependency and nothing only the workspace (@ugs/client) needs. Throws when the lockfile
 * lacks a required package: `npm ci` would have refused it too.
 */
export function productionShrinkwrap(lockfile, manifest) {
  const { packages } = lockfile;
  const reached = new Set();
  const pending = [
    ...Object.keys(manifest.dependencies ?? {}).map((name) => ({ from: '', name, optional: false })),
    ...Object.keys(manifest.optionalDependencies ?? {}).map((name) => ({ from: '', name, optional: true })),
  ];
  while (pending.length > 0) {
    const { from, name, optional } = pending.pop();
    const key = resolve(packages, from, name);
    if (key === undefined) {
      if (optional) continue;
      throw new Error(`package-lock.json has no ${name} for ${from || 'the root'}: run npm install`);
    }
    if (reached.has(key)) continue;
    if (packages[key].link) throw new Error(`${key} is a workspace link: the release cannot depend on it`);
    reached.add(key);
    pending.push(...needs(packages[key]).map((need) => ({ from: key, ...need })));
  }
  const { name, version, license, bin, engines, dependencies, optionalDependencies } = manifest;
  const root = { name, version, license, bin, engines, dependencies, optionalDependencies };
  const entries = [...reached].sort().map((key) => {
    const entry = { ...packages[key] };
    // devOptional: optional for production, required only by a devDependency.
    if (entry.devOptional) entry.optional = true;
    delete entry.dev;
    delete entry.devOptional;
    return [key, entry];
  });
  return {
    name,
    version,
    lockfileVersion: 3,
    requires: true,
    packages: { '': JSON.parse(JSON.stringify(root)), ...Object.fromEntries(entries) },
  };
}
