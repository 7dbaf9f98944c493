// `npm run openapi:write`: writes the served OpenAPI document to openapi.json at the repository's
// root, after any change to the API (test/http/openapi.test.ts fails until the file matches).
import { writeFileSync } from 'node:fs';
import { COMMITTED_OPENAPI, servedOpenApiDocument } from './openapi-document.js';

writeFileSync(COMMITTED_OPENAPI, await servedOpenApiDocument());
process.stdout.write(`wrote ${COMMITTED_OPENAPI}\n`);
