/** A person as an owner of idempotency keys: in one workspace, identified by (issuer, sub). */
export interface IdempotencyPerson {
  workspaceId: number;
  issuer: string;
  subject: string;
}

/** Whose keys: an API token's or a person's, never both. Two owners never see each other's records. */
export type IdempotencyOwner =
  { apiTokenId: number; person?: never } | { person: IdempotencyPerson; apiTokenId?: never };

/** One idempotency key of one owner, as the store knows it. */
export type IdempotencyKeyRef = IdempotencyOwner & {
  /** SHA-256 of the key: the key itself is never stored. */
  keyHash: string;
};

/** A claim as the service made it; `createdAt` tells it apart from a later claim of the same key. */
export type IdempotencyClaimRef = IdempotencyKeyRef & {
  createdAt: string;
};

export type IdempotencyClaimAttempt = IdempotencyClaimRef & {
  fingerprint: string;
  /** A record created at or before this is expired: it is replaced as if absent. */
  expiredBefore: string;
  /** An unfinished claim created at or before this is abandoned: a request of the same fingerprint takes it over. */
  abandonedBefore: string;
  /** The most live (unexpired) keys the owner may hold, this claim's included. */
  maxLiveKeys: number;
  /** The most bytes of stored responses the owner's live keys may hold before a new key is refused. */
  maxLiveBytes: number;
};

export interface IdempotencyKeyRecord {
  fingerprint: string;
  createdAt: string;
  /** The stored response (ciphertext), or null while the claimant is still at work. */
  response: string | null;
}

/** Outcome of a claim: ours, the live record that stands in the way, or none because the owner holds too many keys or bytes. */
export type IdempotencyClaimResult =
  | { claimed: true }
  | { claimed: false; record: IdempotencyKeyRecord }
  | { claimed: false; limitReached: 'keys' | 'bytes' };

/** Bookkeeping of safe retries: no method writes an audit event, and none is part of a change's transaction. */
export interface IdempotencyStore {
  /**
   * Inserts an unfinished claim unless a live record holds the key; an expired record, or an abandoned
   * claim with the same fingerprint, is replaced. Of concurrent claims of one key exactly one wins.
   * A claim that would take the owner's live keys beyond `maxLiveKeys`, or that finds their stored
   * responses at `maxLiveBytes` or more, is not made, also when claims of one owner race.
   */
  claimIdempotencyKey(attempt: IdempotencyClaimAttempt): Promise<IdempotencyClaimResult>;
  /** Stores the response of the claim, if the claim is still this one and unfinished; false otherwise. */
  completeIdempotencyKey(claim: IdempotencyClaimRef, response: string): Promise<boolean>;
  /** Deletes the claim if it is still this one and unfinished, so that a retry runs the request again. */
  releaseIdempotencyKey(claim: IdempotencyClaimRef): Promise<void>;
  /** Deletes at most `limit` records created at or before `createdBefore`; returns how many went. */
  purgeIdempotencyKeys(createdBefore: string, limit: number): Promise<number>;
}

/** What an owner's live keys hold, the new claim's included (its response not yet stored). */
export interface LiveKeys {
  count: number;
  bytes: number;
}
