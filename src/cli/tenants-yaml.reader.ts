import { isSeq, LineCounter, parseDocument, visit, type Node } from 'yaml';
import { requestFailure } from '../wire/request-errors.js';

/** One group of a YAML tenants file, as JSON would carry it, with the line its item starts on. */
export interface YamlTenant {
  line: number;
  value: unknown;
}

const yamlError = requestFailure.yamlLine;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's text, decoded strictly; invalid UTF-8 refused with the line it is on. */
function utf8Text(input: Buffer): string {
  try {
    return utf8.decode(input);
  } catch {
    // Named below.
  }
  // A line end (0x0a) is never part of a multi-byte sequence: some line fails to decode on its own,
  // and the last line is the one when every line before it decodes.
  for (let start = 0, line = 1; ; line += 1) {
    const end = input.indexOf(0x0a, start);
    if (end === -1 || !decodes(input.subarray(start, end))) throw yamlError(line, 'The text is not valid UTF-8.');
    start = end + 1;
  }
}

function decodes(bytes: Uint8Array): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The text JSON would write for a plain scalar's value: what the file must say for the value to be read as written. */
function jsonText(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  return undefined;
}

/**
 * A tenants file written in YAML: a sequence of group mappings. YAML reads some text as another value
 * than it shows, and a tenants file must never turn one group's id into another's, so a plain
 * (unquoted) scalar that is not a string must be written exactly as JSON writes its value: `00123`,
 * `1e3`, `9007199254740993` (past 2^53), `True`, `~` or an empty value are refused with their line, to
 * be quoted or written out. Aliases and tags are refused too; duplicate keys and several documents are
 * YAML errors. Bytes that are not UTF-8 are refused with their line, never read as U+FFFD.
 */
export function readTenantsYaml(input: Buffer): YamlTenant[] {
  const text = utf8Text(input);
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, merge: false, uniqueKeys: true, prettyErrors: false });
  const lineOf = (offset: number | undefined) => lineCounter.linePos(offset ?? 0).line;
  const [error] = document.errors;
  if (error) throw yamlError(lineOf(error.pos[0]), `The text is not valid YAML: ${error.message.split('\n')[0]}`);

  const refuseTag = (node: Node) => {
    if (node.tag !== undefined)
      throw yamlError(lineOf(node.range?.[0]), `Tags (${node.tag}) are not allowed; quote the value instead.`);
  };
  visit(document, {
    Alias(_key, node) {
      throw yamlError(lineOf(node.range?.[0]), `Aliases (*${node.source}) are not allowed; write the value out.`);
    },
    Map: (_key, node) => refuseTag(node),
    Seq: (_key, node) => refuseTag(node),
    Scalar(_key, node) {
      refuseTag(node);
      if (node.type !== 'PLAIN' || typeof node.value === 'string') return;
      const source = node.source ?? '';
      if (jsonText(node.value) !== source)
        throw yamlError(
          lineOf(node.range?.[0]),
          source === ''
            ? 'An empty value would be read as null; write null, or the value.'
            : `${source} would be read as ${jsonText(node.value) ?? String(node.value)}; quote it ("${source}") to keep it as text, or write the value as JSON does.`,
        );
    },
  });

  const root = document.contents;
  if (root === null) return [];
  if (!isSeq(root))
    throw yamlError(
      lineOf(root.range?.[0]),
      'A tenants file in YAML is a list of user groups (each item starting with "- ").',
    );
  return root.items.map((item) => ({
    line: lineOf((item as Node | null)?.range?.[0]),
    value: (item as Node | null)?.toJS(document) ?? null,
  }));
}
