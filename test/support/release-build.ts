// Another release of the service built from this repository's history, for tests that run two
// versions side by side (a rolling upgrade): the commit's tree exported with `git archive`, compiled
// with this checkout's TypeScript against this checkout's node_modules (a release's own dependencies
// differ at most by what later commits added), and its bin/ugs.js returned.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './ugs-command.js';

const exec = promisify(execFile);

export interface ReleaseBuild {
  /** The build's bin/ugs.js (executable), for startServeProcess's `ugs`. */
  ugs: string;
  remove(): Promise<void>;
}

export async function buildRelease(commit: string): Promise<ReleaseBuild> {
  const dir = await mkdtemp(join(tmpdir(), `ugs-release-${commit.slice(0, 7)}-`));
  try {
    await exec('bash', ['-c', `git -C "${REPO}" archive --format=tar "${commit}" | tar -x -C "${dir}"`]);
    await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
    // Emitted without type-checking: the types of later dependency versions are not that release's concern.
    await exec(
      process.execPath,
      [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--noCheck'],
      {
        cwd: dir,
        timeout: 180_000,
      },
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return { ugs: join(dir, 'bin', 'ugs.js'), remove: () => rm(dir, { recursive: true, force: true }) };
}
