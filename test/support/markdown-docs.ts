// The repository's Markdown docs as the docs tests read them: which files there are, their relative
// links, their headings' anchors (GitHub's), and the prose outside code blocks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, with a trailing separator. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The files of `dir` (relative to the repository) whose name ends with `suffix`, as repository paths. */
const filesOf = (dir: string, suffix: string): string[] =>
  existsSync(join(REPO, dir))
    ? readdirSync(join(REPO, dir))
        .filter((name) => name.endsWith(suffix))
        .map((name) => `${dir}/${name}`)
    : [];

/** The docs a reader gets: the README, docs/*.md, docs/adr/*.md, and the READMEs of the client and the bench. */
export const DOCS: readonly string[] = [
  'README.md',
  ...filesOf('docs', '.md'),
  ...filesOf('docs/adr', '.md'),
  'packages/client/README.md',
  'bench/README.md',
];

/** A doc's text, by its repository path. */
export const docText = (doc: string): string => readFileSync(join(REPO, doc), 'utf8');

/** Markdown without its fenced code blocks. */
export const withoutCodeBlocks = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```$/gm, '');

/** Inline links and images, `[text](target)`, outside code blocks and code spans; links with a scheme left out. */
export function relativeLinks(markdown: string): string[] {
  const prose = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** GitHub's anchors: headings lower-cased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

const anchorsByFile = new Map<string, Set<string>>();

/** The anchors of the Markdown file at an absolute path, read once. */
export function anchorsOf(file: string): Set<string> {
  if (!anchorsByFile.has(file)) anchorsByFile.set(file, anchors(readFileSync(file, 'utf8')));
  return anchorsByFile.get(file)!;
}
