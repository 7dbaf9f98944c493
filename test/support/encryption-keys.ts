import { randomBytes } from 'node:crypto';
import { encryptionKeyId } from '../../src/domain/secrets.js';

/** A new random encryption key, base64, as UGS_ENCRYPTION_KEY and the key file hold it. */
export const newKey = (): string => randomBytes(32).toString('base64');

/** The key id of a base64 encryption key, as `ugs keys list` and the errors name it. */
export const keyIdOf = (base64: string): string => encryptionKeyId(Buffer.from(base64, 'base64'));
