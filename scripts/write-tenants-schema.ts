// Writes docs/tenants.schema.json from the sync body's schema (src/wire/tenants-file.schema.ts).
import { writeFileSync } from 'node:fs';
import { tenantsFileJsonSchema } from '../src/wire/tenants-file.schema.js';

writeFileSync(
  new URL('../docs/tenants.schema.json', import.meta.url),
  `${JSON.stringify(tenantsFileJsonSchema(), null, 2)}\n`,
);
