import { SyncBody } from './user-group-sync.schemas.js';

/**
 * The JSON Schema of a tenants file (a sync's desired state as a JSON array or a YAML list), made
 * from the schema that validates a sync's body, for editors to check a file as it is written.
 * docs/tenants.schema.json is this, written by `npm run tenants-schema:write`; a test keeps the two equal.
 */
export function tenantsFileJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'User Group Service tenants file',
    ...(JSON.parse(JSON.stringify(SyncBody)) as Record<string, unknown>),
  };
}
