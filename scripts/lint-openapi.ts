// `npm run lint:openapi` (CI, after `npm run lint`): the document the service serves, as it serves
// it, linted by Redocly's CLI with the recommended ruleset as redocly.yaml adjusts it (every rule it
// turns down says why). Builds the app from source on a scratch SQLite database, asks it for
// GET /openapi.json, writes the answer to a temporary file and lints that; the exit code is Redocly's.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/http/app.js';
import { openRuntime } from '../src/runtime.js';

const dir = mkdtempSync(join(tmpdir(), 'ugs-openapi-lint-'));
try {
  const runtime = await openRuntime({ databaseUrl: `sqlite:${join(dir, 'ugs.db')}`, encryptionKey: undefined });
  const app = await buildApp({
    services: runtime.services,
    logger: false,
    rateLimit: 'off',
    version: 'lint',
    publicUrl: runtime.publicUrl,
  });
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  await app.close();
  await runtime.close();
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
  const document = join(dir, 'openapi.json');
  // Indented, so that what Redocly reports points at a readable line.
  writeFileSync(document, JSON.stringify(JSON.parse(response.body), null, 2));
  const lint = spawnSync('npx', ['--no-install', 'redocly', 'lint', document, '--config', 'redocly.yaml'], {
    stdio: 'inherit',
  });
  process.exitCode = lint.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
