// The docs stand on their own. No doc, README or code comment cites a document outside the
// repository (the product specification: "SPEC §10", "../shared/SPEC.md", "the spec") or an issue
// number ("issue 25", "(#38)", "Metabase #69010"): a reader cannot open either, so the rule itself is
// stated in the repository's docs (docs/api.md is the contract) and a comment points there
// (docs/api.md#embed-tokens). Every repository path a doc names exists, and every doc a comment
// points at exists with the heading it names.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, DOCS, docText, REPO, withoutCodeBlocks } from '../support/markdown-docs.js';

/** What cites outside the repository, each with what it catches. */
const CITATIONS: readonly { what: string; pattern: RegExp }[] = [
  { what: 'the specification', pattern: /\bSPEC\b/ },
  // A section of a named standard stays ("RFC 9112 §9.6", "OpenID Connect Core §3.1.3.7", "as §2.1 allows"
  // after it); a bare one ("(§8)", "as §6 allows") is the specification's.
  { what: 'a section (§) of no named document', pattern: /(?<![A-Z][\w-]*\s|\d\s)§\s?\d+(?![.\d])/ },
  { what: '"the spec"', pattern: /\bthe spec\b(?!ification)/i },
  { what: 'a file outside the repository', pattern: /\.\.\/shared\// },
  { what: 'an issue by number', pattern: /\bissues? #?\d+/i },
  { what: 'a numbered reference, "(#38)" or "Metabase #69010"', pattern: /(?<![\w&#/])#\d+\b(?![\da-f])/i },
];

/** The citations in a text, as `what: "the words"`. */
function citationsIn(text: string): string[] {
  return CITATIONS.flatMap(({ what, pattern }) => {
    const found = new RegExp(pattern.source, `${pattern.flags}g`);
    return [...text.matchAll(found)].map((match) => `${what}: "${text.slice(match.index, match.index + 24)}"`);
  });
}

/**
 * A source file's comments and text, line by line, where a citation may hide: every line (strings
 * included: a test's title, an OpenAPI description) for the words, but a numbered reference only in
 * a comment, since `#116329` is a colour and `#x` a private field in code.
 */
function citationsInSource(source: string, path: string): string[] {
  const numbered = CITATIONS[CITATIONS.length - 1]!;
  const words = CITATIONS.slice(0, -1);
  return source.split('\n').flatMap((line, index) => {
    const comment = /^\s*(?:\/\/|\/?\*|#(?!!))/.test(line) ? line : (/\s\/\/\s.*$/.exec(line)?.[0] ?? '');
    const found = [
      ...words.filter(({ pattern }) => pattern.test(line)).map(({ what }) => what),
      ...(numbered.pattern.test(comment) ? [numbered.what] : []),
    ];
    return found.map((what) => `${path}:${index + 1}: ${what}: ${line.trim().slice(0, 120)}`);
  });
}

const SOURCE_ROOTS = [
  'src',
  'console/src',
  'packages/client/src',
  'packages/client/test',
  'scripts',
  'bin',
  'test',
  'bench',
  'deploy',
  '.ci',
];
const SOURCE_FILE = /\.(?:[cm]?[jt]sx?|css|html|ya?ml|service|sh)$|^[^.]+$/;
const SKIP = new Set(['node_modules', 'dist', 'results']);
/** This file quotes what it looks for. */
const SELF = 'test/docs/citations.test.ts';

/** The files under a folder of the repository, recursively, as repository paths (node_modules, dist and bench results left out). */
function filesUnder(dir: string): string[] {
  if (!existsSync(join(REPO, dir))) return [];
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

const SOURCES = [
  ...SOURCE_ROOTS.flatMap(filesUnder).filter((path) => SOURCE_FILE.test(path.split('/').pop()!) && path !== SELF),
  'Dockerfile',
];

/**
 * The repository paths a doc names (`src/…`, `test/…`, `console/…`, `packages/…`, `scripts/…`,
 * `bench/…`) outside its code blocks (whose commands may name the reader's own files), as written,
 * without a line (`:12`) or an anchor (`#x`); a placeholder (`src/domain/<resource>/`) ends the path.
 */
function namedPaths(markdown: string): string[] {
  const found = withoutCodeBlocks(markdown).matchAll(
    /(?<![\w\-/.])(?:\.\.\/)*((?:src|test|console|packages|scripts|bench)\/[\w.\-/*]*)/g,
  );
  return [...new Set([...found].map((match) => match[1]!.replace(/[.]+$/, '')))];
}

// What the glob marks stand for: two stars and a slash any folders, two stars anything, a star anything within one name.
const GLOB_PARTS: Record<string, string> = { '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*' };

/** Whether git ignores a path: what a tool writes when it runs (bench/.data/, bench/profiles/), not a file of the repository. */
function ignoredByGit(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', path], { cwd: REPO, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether a named path exists: a file or a folder, or for a glob (`*`, `**`), at least one file it matches. */
function pathExists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(REPO, path)) || ignoredByGit(path);
  const fixed = path
    .slice(0, path.indexOf('*'))
    .replace(/[^/]*$/, '')
    .replace(/\/$/, '');
  if (fixed === '' || !existsSync(join(REPO, fixed)) || !statSync(join(REPO, fixed)).isDirectory()) return false;
  const pattern = path
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) => GLOB_PARTS[part] ?? part.replace(/[.+?^$(){}|[\]\\]/g, '\\$&'))
    .join('');
  const glob = new RegExp(`^${pattern}/?$`);
  // Files, and the folders that hold them (a glob ending in a slash names folders).
  const candidates = filesUnder(fixed).flatMap((file) =>
    file.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  );
  return candidates.some((candidate) => glob.test(candidate));
}

/** The docs a source comment points at: `docs/api.md#embed-tokens`, `packages/client/README.md`. */
function pointedDocs(source: string): string[] {
  return [
    ...source.matchAll(
      /(?<![\w\-/.])((?:docs\/[\w\-/]+|packages\/client\/README|bench\/README|README)\.md)(?:#([\w-]+))?/g,
    ),
  ].map((match) => (match[2] ? `${match[1]}#${match[2]}` : match[1]!));
}

describe('what counts as a citation', () => {
  it.each([
    'see SPEC §10',
    'as ../shared/SPEC.md says',
    'the spec wants 405',
    'The spec says so',
    'a bound of issue 25',
    'Issue 30, done-when 2',
    'issues 5 to 15',
    'fixed in (#38)',
    'Metabase #69010 says',
    'the keys live outside (§8)',
    'as § 6 allows',
  ])('%j cites outside the repository', (text) => {
    expect(citationsIn(text)).not.toEqual([]);
  });

  it.each([
    'see docs/api.md#embed-tokens',
    'RFC 9112 §9.6 lets a server close it',
    'RFC 6749 §2.3.1',
    'OpenID Connect Core §3.1.3.7: the authorized party',
    'RFC 7662 §2.1, form-encoded; others ignored, as §2.1 allows',
    'the Standard Webhooks specification',
    'a SPEC_BODIES table',
    '[Webhooks](#webhooks)',
    'an issuer of its own',
    '`&#39;` is an entity',
  ])('%j cites nothing', (text) => {
    expect(citationsIn(text)).toEqual([]);
  });

  it('finds numbered references in comments only, not colours or private fields in code', () => {
    expect(citationsInSource('  color: #116329;\n  this.#42', 'a.css')).toEqual([]);
    expect(citationsInSource('/* as #38 said */', 'a.css')).toHaveLength(1);
    expect(citationsInSource('const x = 1; // see #38', 'a.ts')).toHaveLength(1);
    expect(citationsInSource("it('bounded (SPEC §13)', () => {", 'a.test.ts')).toHaveLength(1);
  });

  it('takes the paths a doc names, without their line or anchor, and tells those that do not exist', () => {
    const text =
      'See `src/http/app.ts:12`, [the test](../test/docs/links.test.ts#L3), src/nowhere/gone.ts. And console/src/screens/*.tsx';
    expect(namedPaths(text)).toEqual([
      'src/http/app.ts',
      'test/docs/links.test.ts',
      'src/nowhere/gone.ts',
      'console/src/screens/*.tsx',
    ]);
    expect(namedPaths(text).filter((path) => !pathExists(path))).toEqual(['src/nowhere/gone.ts']);
    expect(pathExists('src/store/sqlite/migrations/*.ts')).toBe(true);
    expect(pathExists('src/store/sqlite/migrations/*.nothing')).toBe(false);
    expect(pathExists('test/**/links.test.ts')).toBe(true);
    expect(pathExists('src/domain/**')).toBe(true);
    expect(pathExists('bench/profiles/')).toBe(true);
    expect(namedPaths('GET /console/session and https://x.test/src/a.ts')).toEqual([]);
    expect(namedPaths('```sh\nnpx gen -o src/mine\n```\n')).toEqual([]);
  });
});

describe('the docs stand on their own', () => {
  it('has docs and sources to read', () => {
    expect(DOCS.length).toBeGreaterThan(8);
    for (const root of ['src/', 'console/src/', 'packages/client/src/', 'scripts/', 'bin/', 'test/'])
      expect(
        SOURCES.some((path) => path.startsWith(root)),
        root,
      ).toBe(true);
  });

  it.each(DOCS)('%s cites no document outside the repository and no issue number', (doc) => {
    const cited = docText(doc)
      .split('\n')
      .flatMap((line, index) => citationsIn(line).map((citation) => `${doc}:${index + 1}: ${citation}`));
    expect(cited).toEqual([]);
  });

  it('no source file cites a document outside the repository or an issue number, in a comment or a string', () => {
    const cited = SOURCES.flatMap((path) => citationsInSource(readFileSync(join(REPO, path), 'utf8'), path));
    expect(cited).toEqual([]);
  });

  it('the OpenAPI document (openapi.json, kept equal to the served one) cites nothing and names no doc of the repository', () => {
    const document = readFileSync(join(REPO, 'openapi.json'), 'utf8');
    expect(citationsIn(document)).toEqual([]);
    expect(document.match(/\bdocs\/[\w./-]*\.md/g) ?? []).toEqual([]);
  });

  it.each(DOCS)('every repository path %s names exists', (doc) => {
    expect(namedPaths(docText(doc)).filter((path) => !pathExists(path))).toEqual([]);
  });

  it('every doc a source comment points at exists, with the heading it names', () => {
    const broken = SOURCES.flatMap((path) =>
      pointedDocs(readFileSync(join(REPO, path), 'utf8'))
        .filter((pointer) => {
          const [doc, anchor] = pointer.split('#') as [string, string | undefined];
          if (!existsSync(join(REPO, doc))) return true;
          return anchor !== undefined && !anchorsOf(join(REPO, doc)).has(anchor);
        })
        .map((pointer) => `${path}: ${pointer}`),
    );
    expect(broken).toEqual([]);
  });
});
