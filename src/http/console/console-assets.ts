import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The admin console's built front end (console/, built by `npm run build` into dist/console). The
 * files are read once, when the app is built: a dozen files of a few hundred KiB, served from memory,
 * so no request ever turns its path into a file system path.
 */

/** dist/console of this package: src/http/console and dist/http/console are both three levels below the root. */
const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  /** Vite puts a content hash into every name under assets/, so such a file never changes. */
  immutable: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Every file of the build by its URL path below /console/ (`index.html`, `assets/index-1a2b.js`); empty when there is no build. */
export function loadConsoleAssets(dir = CONSOLE_BUILD_DIR): Map<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  if (!existsSync(join(dir, 'index.html'))) return assets;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const urlPath = relative(dir, path).split(sep).join('/');
    assets.set(urlPath, {
      body: readFileSync(path),
      contentType: CONTENT_TYPES[extname(entry.name)] ?? 'application/octet-stream',
      immutable: urlPath.startsWith('assets/'),
    });
  }
  return assets;
}
