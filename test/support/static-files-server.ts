// A tiny static web server on loopback, for pages of another origin than the service's in browser
// tests: directories served under URL prefixes (scripts as ES modules) and pages given as text.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

export interface StaticFilesServer {
  port: number;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
};

/** The file `path` names under one of `directories` (URL prefix → directory), never outside it. */
function fileOf(directories: Record<string, string>, path: string): string | undefined {
  for (const [prefix, directory] of Object.entries(directories)) {
    if (!path.startsWith(prefix)) continue;
    const root = normalize(directory + sep);
    const file = normalize(join(root, decodeURIComponent(path.slice(prefix.length))));
    if (!file.startsWith(root)) return undefined;
    try {
      return statSync(file).isFile() ? file : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Listens on 127.0.0.1 at a free port: reachable as http://127.0.0.1:<port> and http://localhost:<port>, two origins. */
export async function startStaticFilesServer(
  directories: Record<string, string>,
  pages: Record<string, string>,
): Promise<StaticFilesServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://static.invalid').pathname;
    const page = pages[path];
    if (page !== undefined) {
      response.writeHead(200, { 'content-type': CONTENT_TYPES['.html'] }).end(page);
      return;
    }
    const file = fileOf(directories, path);
    if (file === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
