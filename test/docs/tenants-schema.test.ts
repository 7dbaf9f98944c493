// The committed JSON Schema of a tenants file is the one the sync's own body schema makes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tenantsFileJsonSchema } from '../../src/wire/tenants-file.schema.js';

describe('docs/tenants.schema.json', () => {
  it('is what `npm run tenants-schema:write` writes from the sync body schema', () => {
    const committed: unknown = JSON.parse(
      readFileSync(new URL('../../docs/tenants.schema.json', import.meta.url), 'utf8'),
    );
    expect(committed).toEqual(tenantsFileJsonSchema());
    expect(committed).toMatchObject({ type: 'array', items: { required: ['user_group_id'] } });
  });
});
