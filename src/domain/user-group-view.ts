import { mappingToRecord } from './mapping.js';
import type { JsonObject, UserGroupRecord } from './models.js';
import type { TokenCipher } from './secrets.js';
import type { Environment } from './tenancy.js';

/** A group as every response shows it: all of it, with the token in the clear. */
export interface UserGroupView {
  teamId: number;
  token: string;
  name: string;
  providedId: string;
  properties: JsonObject | null;
  mapping: Record<string, string>;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
}

/** `knownToken` saves a decryption when the caller already holds the token (verify, rotate, create). */
export function createUserGroupViewer(cipher: Pick<TokenCipher, 'decrypt'>) {
  return (group: UserGroupRecord, knownToken?: string): UserGroupView => ({
    teamId: group.teamId,
    token: knownToken ?? cipher.decrypt(group.tokenCiphertext),
    name: group.name,
    providedId: group.providedId,
    properties: group.properties,
    mapping: mappingToRecord(group.mapping),
    environment: group.environment,
    createdAt: group.createdAt,
    updatedAt: group.updatedAt,
  });
}
