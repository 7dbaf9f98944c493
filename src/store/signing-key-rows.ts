import type { JsonObject } from '../domain/common.records.js';
import type { SigningKeyRecord } from '../domain/signing-keys/signing-key.records.js';
import type { Environment } from '../domain/tenancy.js';

/** A signing_keys row once the engine has decoded its own types (ids, timestamps). */
export interface SigningKeyRow {
  id: number;
  workspace_id: number;
  environment: Environment;
  kid: string;
  public_jwk: string;
  private_key_ciphertext: string;
  created_at: string;
  retired_at: string | null;
}

export function signingKeyFromRow(row: SigningKeyRow): SigningKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    kid: row.kid,
    publicJwk: JSON.parse(row.public_jwk) as JsonObject,
    privateKeyCiphertext: row.private_key_ciphertext,
    createdAt: row.created_at,
    retiredAt: row.retired_at,
  };
}

export const SIGNING_KEY_COLUMNS =
  'id, workspace_id, environment, kid, public_jwk, private_key_ciphertext, created_at, retired_at';

/** The migration whose application is the moment the service began signing low-S (see its comment). */
export const LOW_S_MIGRATION_VERSION = 9;
