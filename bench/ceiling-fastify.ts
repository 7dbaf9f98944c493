// The framework's ceiling: a bare Fastify route answering the same GET-with-body requests as the
// service's get-or-create (Fastify's own JSON body parsing, no hooks, no logger) with the bytes of a
// real get-or-create response (body and the service's own headers, captured by bench/run.ts). What
// the service spends beyond it is its own work; the node:http ceiling (ceiling-server.ts) is what
// any Node HTTP server spends.
//
//   node bench/ceiling-fastify.ts <port> <capture.json>    (run with --import tsx)
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply } from 'fastify';

interface Capture {
  headers: Record<string, string>;
  bodyBase64: string;
}

const [portArg, captureFile] = process.argv.slice(2);
if (portArg === undefined || captureFile === undefined) {
  process.stderr.write('usage: ceiling-fastify.ts <port> <capture.json>\n');
  process.exit(2);
}

const capture = JSON.parse(readFileSync(captureFile, 'utf8')) as Capture;
const body = Buffer.from(capture.bodyBase64, 'base64');

const app = Fastify({ logger: false });
// As the service does (src/http/app.ts): GET /api/user carries a JSON body.
app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
const answer = (_request: unknown, reply: FastifyReply) => reply.headers(capture.headers).send(body);
app.get('/api/user', answer);
// The bench's readiness probe.
app.get('/', answer);

await app.listen({ port: Number(portArg), host: '127.0.0.1' });

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
