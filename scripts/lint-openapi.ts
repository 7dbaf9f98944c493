// `npm run lint:openapi` (CI, after `npm run lint`): the document the service serves, as it serves
// it, linted by Redocly's CLI with the recommended ruleset as redocly.yaml adjusts it (every rule it
// turns down says why). Builds the app from source on a scratch SQLite database, asks it for
// GET /openapi.json (scripts/openapi-document.ts), writes the answer to a temporary file and lints
// that; the exit code is Redocly's.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servedOpenApiDocument } from './openapi-document.js';

const dir = mkdtempSync(join(tmpdir(), 'ugs-openapi-lint-'));
try {
  const document = join(dir, 'openapi.json');
  // Indented, so that what Redocly reports points at a readable line.
  writeFileSync(document, await servedOpenApiDocument());
  const lint = spawnSync('npx', ['--no-install', 'redocly', 'lint', document, '--config', 'redocly.yaml'], {
    stdio: 'inherit',
  });
  process.exitCode = lint.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
