// The README's shell examples as steps a test can run in order, and the rule that says whether a
// response has the shape the README shows for it (test/http/readme-examples.test.ts).

/** One command of a ```sh block (continuation lines joined) and the response the README shows after it, if any. */
export interface ReadmeStep {
  command: string;
  /** `# {…}` (status 200) or `# 404 {…}` right after the command, `#  ` lines continuing it. */
  shown?: { status: number; body: string };
}

const SH_BLOCK = /^```sh\n([\s\S]*?)^```$/gm;
const SHOWN_START = /^# (?:(\d{3}) )?(\{.*)$/;
const SHOWN_CONTINUED = /^# {2}(.*)$/;

/** Every ```sh block of the Markdown text, each as its steps, in the order they appear. */
export function shellBlocks(markdown: string): ReadmeStep[][] {
  return [...markdown.matchAll(SH_BLOCK)].map((match) => blockSteps(match[1]!));
}

function blockSteps(block: string): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  const lines = block.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const start = SHOWN_START.exec(line);
      const last = steps.at(-1);
      // Other comments are prose; a response belongs to the command right above it.
      if (!start || !last || last.shown) continue;
      let body = start[2]!;
      while (index + 1 < lines.length && SHOWN_CONTINUED.test(lines[index + 1]!))
        body += SHOWN_CONTINUED.exec(lines[++index]!)![1];
      last.shown = { status: start[1] === undefined ? 200 : Number(start[1]), body };
      continue;
    }
    let command = line;
    while (command.endsWith('\\') && index + 1 < lines.length) command += '\n' + lines[++index];
    steps.push({ command });
  }
  return steps;
}

const ELIDED = '…';

/**
 * The response as shown, with `…` standing for "more of the same" made into JSON: a `…` between
 * fields or items drops out; a string with `…` in it stays, and stands for any string.
 */
export function shownSkeleton(shown: string): unknown {
  let out = '';
  let inString = false;
  for (let index = 0; index < shown.length; index++) {
    const char = shown[index]!;
    if (inString) {
      out += char;
      if (char === '\\') out += shown[++index] ?? '';
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (char !== ELIDED) {
      out += char;
    }
  }
  const json = out
    .replace(/,\s*,/g, ',')
    .replace(/([{[])\s*,/g, '$1')
    .replace(/,\s*([}\]])/g, '$1');
  return JSON.parse(json) as unknown;
}

/**
 * Where `actual` does not have the shape of `skeleton`, the path and what differs; undefined when
 * it does. Objects: every key shown is there (more are fine). Arrays: the items shown match the
 * first items. Numbers: any number (ids differ from run to run). A string with `…`: any string.
 * Other strings, booleans and null: exactly that value.
 */
export function shapeMismatch(skeleton: unknown, actual: unknown, path = '$'): string | undefined {
  if (Array.isArray(skeleton)) {
    if (!Array.isArray(actual)) return `${path}: an array was shown, got ${JSON.stringify(actual)}`;
    for (const [index, item] of skeleton.entries()) {
      const mismatch = shapeMismatch(item, actual[index], `${path}[${index}]`);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  if (skeleton !== null && typeof skeleton === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: an object was shown, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(skeleton)) {
      if (!(key in actual)) return `${path}.${key}: shown, but missing from ${JSON.stringify(actual)}`;
      const mismatch = shapeMismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  if (typeof skeleton === 'number')
    return typeof actual === 'number' ? undefined : `${path}: a number was shown, got ${JSON.stringify(actual)}`;
  if (typeof skeleton === 'string' && skeleton.includes(ELIDED))
    return typeof actual === 'string' ? undefined : `${path}: a string was shown, got ${JSON.stringify(actual)}`;
  return skeleton === actual
    ? undefined
    : `${path}: ${JSON.stringify(skeleton)} was shown, got ${JSON.stringify(actual)}`;
}
