import type { Keyring } from '../encryption-keys/keyring.js';
import type { UserGroupRecord } from './user-group.records.js';
import { isHostedTokenShaped, tokenLookupHashes } from '../secrets.js';
import type { Caller } from '../tenancy.js';
import type { UserGroupStore } from './user-groups.port.js';

type TokenReads = Pick<UserGroupStore, 'findUserGroupByTokenHash'>;

/**
 * The group that holds a user group token in the caller's tenant, whether the token is native or
 * one imported from the hosted product (docs/api.md#tokens-imported-from-the-hosted-product). A hosted token is looked up by its keyed hash
 * under every key of the keyring (one key, except while keys rotate), all in one turn, so the hot
 * reads batch them into one statement; the first read confirms the caller's API token. A miss of a
 * hosted token asks a keyring that follows a key file to look at it, and tries once more: `ugs keys
 * rotate` may have re-hashed the row under a key this process has not polled yet.
 */
export async function findByUserGroupToken(
  store: TokenReads,
  keyring: Keyring,
  caller: Caller,
  token: string,
): Promise<UserGroupRecord | null> {
  const found = await findByHashes(store, caller, tokenLookupHashes(token, keyring));
  if (found || !isHostedTokenShaped(token) || !keyring.refresh?.()) return found;
  return findByHashes(store, caller, tokenLookupHashes(token, keyring));
}

async function findByHashes(store: TokenReads, caller: Caller, hashes: string[]): Promise<UserGroupRecord | null> {
  const [first, ...others] = hashes;
  if (first === undefined) return null;
  const groups = await Promise.all([
    store.findUserGroupByTokenHash(caller.tenant, first, caller.tokenCheck),
    ...others.map((hash) => store.findUserGroupByTokenHash(caller.tenant, hash)),
  ]);
  return groups.find((group) => group !== null) ?? null;
}
