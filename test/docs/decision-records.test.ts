// The architectural decisions are records in docs/adr/, one file each (NNNN-title.md): a status, the
// context, the decision and its consequences. A record that changes an older one says so
// (`Supersedes: [NNNN](…)`), and the older one's status names its successor. Contract choices live in
// docs/api.md and docs/cli.md, measurements in docs/performance-history.md; there is no separate
// list of numbered decisions any more (decisions.md beside the docs), so nothing may cite it or an id of
// it (`D42`). The links
// of the records are checked with every other doc's by links.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS, REPO, withoutCodeBlocks } from '../support/markdown-docs.js';

/** A decision record's file name: four digits, then its title in kebab case. */
const RECORD_FILE = /^(\d{4})-[a-z0-9-]+\.md$/;
const RECORDS = readdirSync(join(REPO, 'docs/adr'))
  .filter((name) => RECORD_FILE.test(name))
  .sort();
const recordText = (name: string): string => readFileSync(join(REPO, 'docs/adr', name), 'utf8');
/** The record `NNNN` names, by file name. */
const recordNamed = (number: string): string | undefined => RECORDS.find((name) => name.startsWith(`${number}-`));

/** A record's status line: `accepted`, or `superseded by [NNNN](NNNN-….md)`. */
const STATUS = /^Status: (accepted|superseded by \[(\d{4})\]\((\d{4}-[a-z0-9-]+\.md)\))$/m;
const SUPERSEDES = /^Supersedes: (.+)$/m;

/** Where a citation of the old decision list may hide: the docs, and the sources' comments. */
const SOURCE_ROOTS = ['src', 'test', 'bench', 'scripts', 'packages/client/src', 'packages/client/test', 'console/src'];
const SKIP = new Set(['node_modules', 'dist', 'results']);
function sourcesUnder(dir: string): string[] {
  if (!existsSync(join(REPO, dir))) return [];
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : sourcesUnder(path);
    return entry.isFile() && /\.(?:[cm]?[jt]sx?|md)$/.test(entry.name) ? [path] : [];
  });
}
/** This file names what it looks for. */
const SELF = 'test/docs/decision-records.test.ts';
const CITATION_OF_THE_OLD_LIST = /docs\/decisions\.md|\bdecisions\.md\b|(?<![\w-])D\d{1,3}\b(?![\w-])/;

describe('the decision records', () => {
  it('are numbered from 0001 without a gap or a repeat', () => {
    expect(RECORDS.length).toBeGreaterThan(5);
    expect(RECORDS.map((name) => name.slice(0, 4))).toEqual(RECORDS.map((_, i) => String(i + 1).padStart(4, '0')));
  });

  it.each(RECORDS)('%s has its number as title, a status, then context, decision and consequences', (name) => {
    const text = recordText(name);
    expect(text.split('\n')[0]).toMatch(new RegExp(`^# ${name.slice(0, 4)} \\S`));
    expect(text).toMatch(STATUS);
    const sections = [...withoutCodeBlocks(text).matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(sections).toEqual(['Context', 'Decision', 'Consequences']);
  });

  it.each(RECORDS)('%s: a successor it names supersedes it, and a record it supersedes names it', (name) => {
    const text = recordText(name);
    const status = STATUS.exec(text)!;
    if (status[2] !== undefined) {
      expect(status[3]).toBe(recordNamed(status[2]));
      expect(recordText(status[3]!)).toMatch(new RegExp(`^Supersedes: .*\\[${name.slice(0, 4)}\\]\\(${name}\\)`, 'm'));
    }
    for (const [, number, file] of (SUPERSEDES.exec(text)?.[1] ?? '').matchAll(/\[(\d{4})\]\(([^)]+)\)/g)) {
      expect(file).toBe(recordNamed(number!));
      expect(STATUS.exec(recordText(file!))?.[1]).toBe(`superseded by [${name.slice(0, 4)}](${name})`);
    }
  });

  it('are each listed in docs/adr/README.md with the status the record gives', () => {
    const index = readFileSync(join(REPO, 'docs/adr/README.md'), 'utf8');
    for (const name of RECORDS) {
      const row = index.split('\n').find((line) => line.startsWith(`| [${name.slice(0, 4)} `));
      expect(row, `${name} is in the index`).toBeDefined();
      expect(row!.split('|').at(-2)!.trim()).toBe(STATUS.exec(recordText(name))![1]);
    }
  });

  it('give no nanosecond or microsecond figure: measurements belong to the performance history', () => {
    const figures = RECORDS.flatMap((name) =>
      [...recordText(name).matchAll(/\d\s?(?:ns|µs)\b/g)].map((match) => `${name}: ${match[0]}`),
    );
    expect(figures).toEqual([]);
  });
});

describe('the numbered decision list it replaced', () => {
  it('is gone', () => {
    expect(existsSync(join(REPO, 'docs', 'decisions.md'))).toBe(false);
  });

  it('is cited by no doc and no source comment', () => {
    const files = [...DOCS, ...SOURCE_ROOTS.flatMap(sourcesUnder)].filter((path) => path !== SELF);
    const citing = files.flatMap((path) =>
      readFileSync(join(REPO, path), 'utf8')
        .split('\n')
        .flatMap((line, i) => (CITATION_OF_THE_OLD_LIST.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });
});
