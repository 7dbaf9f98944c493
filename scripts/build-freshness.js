// Whether `npm run build`'s output is up to date, for `npm start` (scripts/start.js): the build leaves
// a stamp (scripts/build-stamp.js), dated when it began, and is fresh while no input is newer. Directories count too: adding,
// deleting or renaming a file changes its directory's mtime. A build that fails leaves no stamp.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What the build reads: the sources of the server, the client library and the console, and their configuration. */
export const BUILD_INPUTS = [
  'src',
  'console',
  'packages/client/src',
  'packages/client/package.json',
  'packages/client/tsconfig.json',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

export const STAMP = 'dist/.build-stamp';

/** The newest modification time under `path` (itself included), in ms; 0 when it does not exist. */
function newestMtime(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stats.mtimeMs);
}

export function isBuildFresh(root) {
  let built;
  try {
    built = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return false;
  }
  return BUILD_INPUTS.every((input) => newestMtime(join(root, input)) <= built);
}
