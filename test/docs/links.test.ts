// The docs a newcomer reads link only to what is there. Every relative Markdown link of
// the README, docs/*.md, docs/adr/*.md, packages/client/README.md and bench/README.md names a file inside the
// repository that exists, and its #anchor, if any, a heading of that file; the README stays the
// short front door (under 200 lines). Links with a scheme (https:, mailto:) are the web's, not checked.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, DOCS, relativeLinks, REPO } from '../support/markdown-docs.js';

/** A decision record (a numbered file of docs/adr/), as opposed to the records' index. */
const ADR_RECORD = /^docs\/adr\/\d{4}-[^/]+\.md$/;

describe('the documentation', () => {
  it('has more than the README to check', () => {
    expect(DOCS.length).toBeGreaterThan(8);
  });

  it.each(DOCS)('%s links only to files of the repository that exist, and to headings they have', (doc) => {
    const text = readFileSync(join(REPO, doc), 'utf8');
    const broken: string[] = [];
    for (const link of relativeLinks(text)) {
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? join(REPO, doc) : resolve(dirname(join(REPO, doc)), decodeURIComponent(path));
      const inside = relative(REPO, target);
      if (inside.startsWith('..') || inside.startsWith(sep) || inside === '')
        broken.push(`${link}: outside the repository`);
      else if (!existsSync(target)) broken.push(`${link}: no such file`);
      else if (anchor !== undefined && statSync(target).isFile() && target.endsWith('.md')) {
        if (!anchorsOf(target).has(anchor)) broken.push(`${link}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  // The two pages a newcomer lands on from the README link every doc there is.
  it.each(['docs/api.md', 'docs/architecture.md'])('%s links every doc of the repository', (hub) => {
    const linked = new Set(
      relativeLinks(readFileSync(join(REPO, hub), 'utf8')).map((link) =>
        relative(REPO, resolve(dirname(join(REPO, hub)), decodeURIComponent(link.split('#')[0]!))),
      ),
    );
    // The decision records are reached through their index (docs/adr/README.md), which links each.
    const missing = DOCS.filter((doc) => doc !== hub && !linked.has(doc) && !ADR_RECORD.test(doc));
    expect(missing).toEqual([]);
  });

  it('docs/adr/README.md links every decision record', () => {
    const records = DOCS.filter((doc) => ADR_RECORD.test(doc));
    expect(records.length).toBeGreaterThan(0);
    const index = join(REPO, 'docs', 'adr', 'README.md');
    const linked = new Set(
      relativeLinks(readFileSync(index, 'utf8')).map((link) =>
        relative(REPO, resolve(dirname(index), decodeURIComponent(link.split('#')[0]!))),
      ),
    );
    expect(records.filter((doc) => !linked.has(doc))).toEqual([]);
  });

  it('README.md is under 200 lines', () => {
    const lines = readFileSync(join(REPO, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThan(200);
  });
});
