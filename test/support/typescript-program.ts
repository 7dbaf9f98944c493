// A scratch TypeScript project in a temporary folder, for tests that type-check and run a program
// written against a client generated at test time (test/openapi-client): the repository's
// node_modules (generators, TypeScript, tsx, the HTTP libraries), strict compiler options, and the
// check that the program escapes none of its types.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { REPO } from './ugs-command.js';

export interface ScratchProject {
  dir: string;
  /**
   * Runs a binary of node_modules/.bin in the project; rejects, with its output, when it fails.
   * Asynchronous: a server under test may answer from this same process.
   */
  run(name: string, args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  remove(): void;
}

/** A project whose tsconfig.json compiles `files` (strict, nothing emitted). */
export function createScratchProject(prefix: string, files: string[]): ScratchProject {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      files,
    }),
  );
  return {
    dir,
    run: (name, args, env = {}) =>
      promisify(execFile)(join(REPO, 'node_modules', '.bin', name), args, {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, ...env },
        maxBuffer: 16 * 1024 * 1024,
      }).catch((error: Error & { stdout?: string; stderr?: string }) => {
        // The compiler's messages are on stdout: the failure shows them, not only the command line.
        throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A scratch project for the enclosing describe block, made before its tests and removed after:
 * `files` (name in the project → the file copied there), the TypeScript ones compiled.
 */
export function useScratchProject(prefix: string, files: Record<string, string>): { readonly project: ScratchProject } {
  let made: ScratchProject | undefined;
  beforeAll(() => {
    made = createScratchProject(
      prefix,
      Object.keys(files).filter((name) => name.endsWith('.ts')),
    );
    for (const [name, source] of Object.entries(files)) copyFileSync(source, join(made.dir, name));
  });
  afterAll(() => made?.remove());
  return {
    get project() {
      if (!made) throw new Error('the scratch project exists only inside tests');
      return made;
    },
  };
}

/**
 * What in a program's code escapes its types, comments aside: `as`, `any`, a non-null assertion
 * (x!) or a directive silencing the compiler. Empty for a program the generated types suffice for.
 */
export function typeEscapesIn(code: string): string[] {
  const withoutComments = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return withoutComments.match(/\bas\b|\bany\b|[\w)\]]!(?!=)|@ts-/g) ?? [];
}
