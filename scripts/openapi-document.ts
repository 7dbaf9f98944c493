// The OpenAPI document exactly as `ugs serve` answers GET /openapi.json with the default public URL,
// built from source on a scratch SQLite database, for the scripts that lint it and write it to
// openapi.json, and for the test that keeps that file equal to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildApp } from '../src/http/app.js';
import { PACKAGE_VERSION } from '../src/cli/package-version.js';
import { openRuntime } from '../src/runtime.js';

/** The committed copy, from which clients are generated without a server (`npm run openapi:write`). */
export const COMMITTED_OPENAPI = resolve(import.meta.dirname, '..', 'openapi.json');

/** The served document (a JSON text), as the file holds it: indented, with a final newline. */
export async function servedOpenApiDocument(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-openapi-'));
  try {
    const runtime = await openRuntime({ databaseUrl: `sqlite:${join(dir, 'ugs.db')}`, encryptionKey: undefined });
    try {
      const app = await buildApp({
        services: runtime.services,
        logger: false,
        rateLimit: 'off',
        version: PACKAGE_VERSION,
        publicUrl: runtime.publicUrl,
      });
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      await app.close();
      if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
      return `${JSON.stringify(JSON.parse(response.body), null, 2)}\n`;
    } finally {
      await runtime.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
