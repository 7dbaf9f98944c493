import { atPosition, type AppError, type InputPosition } from '../domain/errors.js';
import { requestFailure } from './request-errors.js';

/**
 * What a body of many items may hold: refused at the first item past a bound, before the rest is
 * read. Without `maxItems`, any number (a file the CLI reads, which it never holds whole).
 */
export type JsonItemBounds = {
  /** Bytes of one item's JSON text: an NDJSON line, or an element of a JSON array. */
  maxItemBytes: number;
} & (
  | {
      maxItems: number;
      /** The refusal of one item more than `maxItems`. */
      tooMany: () => AppError;
    }
  | { maxItems?: undefined }
);

/**
 * The splitter's own refusals, worded for what it reads: a request body (the API's words, the
 * default) or a file (the CLI's). An item's refusal is given its position (`atPosition`).
 */
export interface JsonItemRefusals {
  /** An array that is not well formed: an empty element, `}` outside an element, never closed, text after it. */
  notJson: () => AppError;
  /** An item (or the body's start) that is not UTF-8. */
  notUtf8: () => AppError;
  itemTooLarge: (maxItemBytes: number) => AppError;
}

const BODY_REFUSALS: JsonItemRefusals = {
  notJson: requestFailure.itemsNotJson,
  notUtf8: requestFailure.bodyNotUtf8,
  itemTooLarge: requestFailure.itemTooLarge,
};

/** Takes one item's JSON text (not yet parsed) and its position; throws the item's refusal. */
export type JsonItemSink = (text: string, at: InputPosition) => void;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const BOM = [0xef, 0xbb, 0xbf];

const isWhitespace = (byte: number) => byte === SPACE || byte === NEWLINE || byte === CARRIAGE_RETURN || byte === TAB;

/**
 * Splits a body of many JSON items as it arrives, chunk by chunk, without ever holding more than one
 * item's text: a JSON array (positions are indexes, from 0) or NDJSON, one item a line (positions
 * are line numbers, from 1; blank lines skipped), told apart by the first character that is not
 * white space. Each item is handed to the sink once complete; an item longer than the bound is
 * refused as soon as its bytes pass it, and the item past `maxItems` as soon as it starts. Works on
 * bytes: the characters that delimit items are ASCII, which no UTF-8 sequence contains, and each
 * item is decoded strictly (invalid UTF-8 is refused, naming the item). The API's streamed bodies
 * and the CLI's import files are both read with it.
 */
export class JsonItemsSplitter {
  private mode: 'start' | 'lines' | 'array' | 'after_array' = 'start';
  private head: Buffer | undefined = Buffer.alloc(0);
  /** The current item's bytes from earlier chunks. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private items = 0;
  private line = 0;
  private index = 0;
  /** Within the array: nesting below the top level, and the string state. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly bounds: JsonItemBounds,
    private readonly sink: JsonItemSink,
    private readonly refusals: JsonItemRefusals = BODY_REFUSALS,
  ) {}

  /** Whether the body had anything but white space (an empty array included). */
  get sawContent(): boolean {
    return this.mode !== 'start';
  }

  push(chunk: Buffer): void {
    if (this.head !== undefined) {
      // The byte order mark, possibly split across the first chunks.
      const head = Buffer.concat([this.head, chunk]);
      if (head.length < BOM.length && BOM.slice(0, head.length).every((byte, at) => head[at] === byte)) {
        this.head = head;
        return;
      }
      this.head = undefined;
      chunk = BOM.every((byte, at) => head[at] === byte) ? head.subarray(BOM.length) : head;
    }
    let from = 0;
    if (this.mode === 'start') from = this.start(chunk);
    if (this.mode === 'lines') this.pushLines(chunk, from);
    else if (this.mode === 'array') this.pushArray(chunk, from);
    else if (this.mode === 'after_array') this.pushAfterArray(chunk, from);
  }

  /** The body is complete: the last line, or the check that the array was closed. */
  end(): void {
    // Fewer bytes than a byte order mark, each one of it: not text.
    if (this.head !== undefined && this.head.length > 0) throw atPosition(this.refusals.notUtf8(), { line: 1 });
    if (this.mode === 'lines' && this.pendingBytes > 0) this.emitLine(this.takePending());
    if (this.mode === 'array') throw this.refusals.notJson();
  }

  /** Skips white space (counting lines) up to the first character, which decides the form. */
  private start(chunk: Buffer): number {
    for (let at = 0; at < chunk.length; at += 1) {
      const byte = chunk[at]!;
      if (byte === NEWLINE) this.line += 1;
      else if (!isWhitespace(byte)) {
        if (byte === OPEN_ARRAY) {
          this.mode = 'array';
          return at + 1;
        }
        this.mode = 'lines';
        return at;
      }
    }
    return chunk.length;
  }

  private pushLines(chunk: Buffer, from: number): void {
    let start = from;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.keep(chunk, start, end, { line: this.line + 1 });
      if (newline === -1) return;
      this.emitLine(this.takePending());
      start = newline + 1;
    }
  }

  private emitLine(bytes: Buffer): void {
    this.line += 1;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
    const at = { line: this.line };
    const text = this.decode(bytes.subarray(0, end), at);
    if (text.trim() === '') return;
    this.emit(text, at);
  }

  private pushArray(chunk: Buffer, from: number): void {
    let start = from;
    for (let at = from; at < chunk.length; at += 1) {
      const byte = chunk[at]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) this.depth += 1;
      else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && this.depth > 0) this.depth -= 1;
      else if (this.depth === 0 && (byte === COMMA || byte === CLOSE_ARRAY || byte === CLOSE_OBJECT)) {
        if (byte === CLOSE_OBJECT) throw atPosition(this.refusals.notJson(), { index: this.index });
        this.keep(chunk, start, at, { index: this.index });
        this.emitElement(this.takePending(), byte === CLOSE_ARRAY);
        start = at + 1;
        if (byte === CLOSE_ARRAY) {
          this.mode = 'after_array';
          this.pushAfterArray(chunk, start);
          return;
        }
      }
    }
    this.keep(chunk, start, chunk.length, { index: this.index });
  }

  private emitElement(bytes: Buffer, last: boolean): void {
    const at = { index: this.index };
    const text = this.decode(bytes, at);
    // `[]` holds no element; any other empty element (`[,`, `[1,]`) is a syntax error at its place.
    if (text.trim() === '' && last && this.index === 0) return;
    this.index += 1;
    if (text.trim() === '') throw atPosition(this.refusals.notJson(), at);
    this.emit(text, at);
  }

  private pushAfterArray(chunk: Buffer, from: number): void {
    for (let at = from; at < chunk.length; at += 1) if (!isWhitespace(chunk[at]!)) throw this.refusals.notJson();
  }

  private emit(text: string, at: InputPosition): void {
    this.items += 1;
    if (this.bounds.maxItems !== undefined && this.items > this.bounds.maxItems) throw this.bounds.tooMany();
    this.sink(text, at);
  }

  /** Adds chunk[start, end) to the current item, refusing it as soon as it passes the bound. */
  private keep(chunk: Buffer, start: number, end: number, at: InputPosition): void {
    if (end <= start) return;
    this.pendingBytes += end - start;
    if (this.pendingBytes > this.bounds.maxItemBytes)
      throw atPosition(this.refusals.itemTooLarge(this.bounds.maxItemBytes), at);
    this.pending.push(chunk.subarray(start, end));
  }

  private takePending(): Buffer {
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return bytes;
  }

  private decode(bytes: Buffer, at: InputPosition): string {
    try {
      return this.decoder.decode(bytes);
    } catch {
      throw atPosition(this.refusals.notUtf8(), at);
    }
  }
}
