// A request whose body a test sends piece by piece over a raw socket, watching what the server
// answers meanwhile: when the answer came (how much of the body had been sent), whether a
// `100 Continue` came first, and how the connection ended.
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

export interface StreamedUploadRequest {
  path: string;
  headers: Record<string, string>;
  /** The body in pieces, produced as they are sent (so a 64 MiB body is never held whole). */
  body: Iterable<Buffer>;
  /** Declared as Content-Length when given; chunked otherwise. */
  contentLength?: number;
  /** Send `Expect: 100-continue` and hold the body until the 100 comes (or the answer instead). */
  expectContinue?: boolean;
  /** Stop sending once this many bytes are out (a client that pauses); the connection stays open. */
  pauseAfterBytes?: number;
}

export interface StreamedUploadResult {
  status: number;
  headers: Record<string, string>;
  body: { success: number; error?: Record<string, unknown>; [key: string]: unknown };
  /** Body bytes the client had handed to its socket when the answer's head arrived. */
  sentBeforeAnswer: number;
  /** Body bytes in all, when the client stopped (it stops at the answer). */
  sentInAll: number;
  /** Whether every byte of the body was sent before the answer came. */
  bodyFinishedBeforeAnswer: boolean;
  sawContinue: boolean;
  /** How the server ended the connection after the answer: FIN (`end`), a reset, or not at all while we watched. */
  ended: 'end' | 'reset' | 'open';
}

export interface StreamedUpload {
  /** Resolves once the answer is complete (and the connection's end was seen, or 3 s passed). */
  result: Promise<StreamedUploadResult>;
  /** Resolves once `pauseAfterBytes` are sent (the upload is then in flight, holding its place). */
  paused: Promise<void>;
  /** Closes the connection (an upload that pauses). */
  abort(): void;
}

const HEAD_END = '\r\n\r\n';
const WATCH_END_MS = 3_000;

/** Starts the upload to `baseUrl`; the body goes out as fast as the socket takes it, giving the event loop a turn between pieces. */
export function streamedUpload(baseUrl: string, request: StreamedUploadRequest): StreamedUpload {
  const url = new URL(baseUrl);
  const socket: Socket = connect(Number(url.port), url.hostname);
  let received = Buffer.alloc(0);
  let sent = 0;
  let sentBeforeAnswer: number | undefined;
  let bodyFinished = false;
  let bodyFinishedBeforeAnswer = false;
  let sawContinue = false;
  let continued: () => void = () => undefined;
  const continueOrAnswer = new Promise<void>((resolve) => (continued = resolve));
  let answered = false;
  let pausedResolve: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (pausedResolve = resolve));

  const result = new Promise<StreamedUploadResult>((resolve, reject) => {
    let head: { status: number; headers: Record<string, string>; bodyStart: number } | undefined;
    let ended: StreamedUploadResult['ended'] = 'open';
    let finish: (() => void) | undefined;
    const onEnd = (how: StreamedUploadResult['ended']) => {
      if (ended === 'open') ended = how;
      finish?.();
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        if (head === undefined) {
          const at = received.indexOf(HEAD_END);
          if (at === -1) return;
          const lines = received.subarray(0, at).toString('latin1').split('\r\n');
          const status = Number(lines[0]!.split(' ')[1]);
          if (status === 100) {
            sawContinue = true;
            received = received.subarray(at + HEAD_END.length);
            continued();
            continue;
          }
          const headers: Record<string, string> = {};
          for (const line of lines.slice(1)) {
            const colon = line.indexOf(':');
            headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          head = { status, headers, bodyStart: at + HEAD_END.length };
          answered = true;
          sentBeforeAnswer = sent;
          bodyFinishedBeforeAnswer = bodyFinished;
          continued();
        }
        const length = Number(head.headers['content-length']);
        if (received.length - head.bodyStart < length) return;
        const { status, headers, bodyStart } = head;
        const body = JSON.parse(received.subarray(bodyStart, bodyStart + length).toString('utf8'));
        const settle = () =>
          resolve({
            status,
            headers,
            body,
            sentBeforeAnswer: sentBeforeAnswer ?? sent,
            sentInAll: sent,
            bodyFinishedBeforeAnswer,
            sawContinue,
            ended,
          });
        if (ended !== 'open') return settle();
        // A connection the server keeps open is the client's to close.
        if (headers.connection !== 'close') {
          socket.destroy();
          return settle();
        }
        const timer = setTimeout(() => {
          socket.destroy();
          settle();
        }, WATCH_END_MS);
        finish = () => {
          clearTimeout(timer);
          settle();
        };
        return;
      }
    });
    socket.on('end', () => onEnd('end'));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (head === undefined && !answered) reject(error);
      else onEnd(error.code === 'ECONNRESET' ? 'reset' : 'end');
    });
    socket.on('close', () => {
      if (head === undefined) reject(new Error(`connection closed without an answer after ${sent} body bytes`));
      onEnd('end');
    });
  });
  result.catch(() => undefined);

  const send = async () => {
    const chunked = request.contentLength === undefined;
    const lines = [
      `POST ${request.path} HTTP/1.1`,
      `Host: ${url.host}`,
      ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`),
      chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${request.contentLength}`,
      ...(request.expectContinue ? ['Expect: 100-continue'] : []),
    ];
    socket.write(lines.join('\r\n') + HEAD_END);
    if (request.expectContinue) await continueOrAnswer;
    for (const piece of request.body) {
      if (answered || socket.destroyed) return;
      const framed = chunked ? [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')] : [piece];
      const flushed = framed.map((part) => socket.write(part)).every(Boolean);
      sent += piece.length;
      if (request.pauseAfterBytes !== undefined && sent >= request.pauseAfterBytes) {
        pausedResolve();
        return;
      }
      if (!flushed) await new Promise<void>((resolve) => socket.once('drain', resolve).once('close', resolve));
      await nextTurn();
    }
    if (answered || socket.destroyed) return;
    if (chunked) socket.write('0\r\n\r\n');
    bodyFinished = true;
  };
  send().catch(() => undefined);
  return { result, paused, abort: () => socket.destroy() };
}

/** `count` pieces of `size` bytes each, made one at a time from `make(index)`. */
export function* pieces(count: number, make: (index: number) => Buffer): Iterable<Buffer> {
  for (let index = 0; index < count; index += 1) yield make(index);
}
