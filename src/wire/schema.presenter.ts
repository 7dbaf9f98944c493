import type { SchemaRecord } from '../domain/schemas/schema.records.js';
import type { Schema } from './schemas.schemas.js';

/** A schema as the API and the CLI show it. */
export const toSchema = (record: SchemaRecord): Schema => ({ id: record.id, name: record.name });
