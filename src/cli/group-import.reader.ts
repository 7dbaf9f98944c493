import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { isAppError, positionText, type AppError, type InputPosition } from '../domain/errors.js';
import type { ImportLine, TransferredUserGroup } from '../domain/user-groups/user-group-transfer.service.js';
import { indexSupplement, type Supplement } from '../domain/user-groups/user-group-transfer.rules.js';
import { JsonItemsSplitter } from '../wire/json-items.reader.js';
import { lineLabel, positionLabel, type ImportForm } from '../wire/user-group-import.presenter.js';
import { IMPORT_FILE_ITEM_BOUNDS, IMPORT_FILE_REFUSALS, importItemOfText } from '../wire/user-group-import.reader.js';

/**
 * An import file the CLI cannot go on with: what the splitter refuses (an item over 1 MiB, invalid
 * UTF-8, a malformed array), or a bad supplement line. `<file>, line N: reason` (or `index N`);
 * what the items before it did is the command's to say.
 */
export class ImportFileStopped extends Error {
  constructor(path: string, where: string, reason: string) {
    super(`${path}, ${where}: ${reason}`);
    this.name = 'ImportFileStopped';
  }
}

/**
 * An import file (`ugs groups import`, `verify-import`, `--supplement`), or stdin for `-`, read as
 * `POST /api/admin/user_groups/import` reads its body: through the same splitter (JsonItemsSplitter),
 * a chunk at a time, never held whole. NDJSON or a JSON array; a byte-order mark, blank lines and
 * CRLF taken; each item at most 1 MiB, any number of them. An item that is not JSON, or not a group,
 * is a refused line in `lines` (the import goes on); what the splitter refuses stops the reading
 * with ImportFileStopped, after the items before it.
 */
export class ImportFile {
  private seen: InputPosition | undefined;

  constructor(
    private readonly path: string,
    private readonly onBytes?: (bytesRead: number) => void,
  ) {}

  /** How the file is written, known from its first item on (before it, and for a file of none: lines). */
  get form(): ImportForm {
    return this.seen !== undefined && 'index' in this.seen ? 'array' : 'lines';
  }

  /** Each item as the domain takes it, in the file's order. */
  async *lines(): AsyncGenerator<ImportLine> {
    const ready: ImportLine[] = [];
    const splitter = new JsonItemsSplitter(
      IMPORT_FILE_ITEM_BOUNDS,
      (text, at) => {
        this.seen = at;
        ready.push(importItemOfText(text, at).line);
      },
      IMPORT_FILE_REFUSALS,
    );
    const input: Readable = this.path === '-' ? process.stdin : createReadStream(this.path);
    let bytes = 0;
    try {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        bytes += data.length;
        this.onBytes?.(bytes);
        const refusal = attempt(() => splitter.push(data));
        // The items the chunk completed before a refusal come first: everything before it is read.
        yield* ready.splice(0);
        if (refusal) throw this.stopped(refusal, 'text follows its closing ]');
      }
      const refusal = attempt(() => splitter.end());
      yield* ready.splice(0);
      if (refusal) throw this.stopped(refusal, 'the file ends before its closing ]');
    } finally {
      // Stopped early (a refusal, or the command's own error): the file is let go of at once.
      if (input !== process.stdin) input.destroy();
    }
  }

  /**
   * The splitter's refusal, named by its position; one without (an array whose `]` never comes, or
   * text after it) after the last item read, with what was wrong.
   */
  private stopped(error: AppError, detail: string): ImportFileStopped {
    if (error.at !== undefined)
      return new ImportFileStopped(
        this.path,
        positionLabel(error.at),
        // atPosition put the position first in the message; the CLI names it its own way.
        error.message.slice(`${positionText(error.at)}: `.length),
      );
    const where = this.seen === undefined ? 'in the array' : `after ${positionLabel(this.seen)}`;
    return new ImportFileStopped(this.path, where, `${error.message} (${detail})`);
  }
}

/** Runs one step of the splitter; its refusal (an AppError) returned, anything else thrown. */
function attempt(step: () => void): AppError | undefined {
  try {
    step();
    return undefined;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
}

/**
 * Reads a supplement (an import file of group lines keyed by provided_id, usually only `mapping`,
 * `parent_user_group_id` and `is_demo_group`) whole; a bad line fails the command before anything
 * is written, naming the line (or index).
 */
export async function readSupplement(path: string): Promise<Supplement> {
  const file = new ImportFile(path);
  const lines: TransferredUserGroup[] = [];
  for await (const item of file.lines()) {
    if ('error' in item) throw new ImportFileStopped(path, lineLabel(item.line, file.form), item.error);
    lines.push(item.group);
  }
  return indexSupplement(lines);
}
