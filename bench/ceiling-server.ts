// The ceiling: the least any Node HTTP service must do per request on this machine. It reads the
// whole request body and answers the bytes of a real get-or-create response (body and the service's
// own headers, captured by bench/run.ts), with nothing else in between.
//
//   node bench/ceiling-server.ts <port> <capture.json>    (run with --import tsx)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface Capture {
  headers: Record<string, string>;
  bodyBase64: string;
}

const [portArg, captureFile] = process.argv.slice(2);
if (portArg === undefined || captureFile === undefined) {
  process.stderr.write('usage: ceiling-server.ts <port> <capture.json>\n');
  process.exit(2);
}

const capture = JSON.parse(readFileSync(captureFile, 'utf8')) as Capture;
const body = Buffer.from(capture.bodyBase64, 'base64');
const headers = { ...capture.headers, 'content-length': String(body.length) };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, headers);
    res.end(body);
  });
});

server.listen(Number(portArg), '127.0.0.1');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
