import type { JsonObject, Timestamp } from '../common.records.js';
import type { Environment, Tenant } from '../tenancy.js';
import type { AccessRule } from '../access-rules/access-rule.records.js';

/** One resolved mapping entry: the group reads schema `schemaId` from data source `dataSourceId`. */
export interface MappingEntry {
  schemaId: number;
  dataSourceId: number;
}

/** What a group holds, whether stored or about to be. */
export interface UserGroupFields {
  providedId: string;
  name: string;
  tokenHash: string;
  tokenCiphertext: string;
  properties: JsonObject | null;
  /** Sorted by schemaId. */
  mapping: MappingEntry[];
  /** The provided id of the parent group in the same tenant, or null for a root. */
  parentProvidedId: string | null;
  isDemoGroup: boolean;
  /** Distinct, in code point order. */
  tags: string[];
  /** The group's own access rules (docs/api.md#access-rules), in the order given; [] when none. */
  accessRules: AccessRule[];
  createdAt: Timestamp;
}

/** What one ancestor of a group passes down to it (docs/api.md#hierarchy-demo-groups-and-tags). */
export interface AncestorValues {
  teamId: number;
  properties: JsonObject | null;
  /** Its own access rules, which its descendants' effective rules include (docs/api.md#access-rules). */
  accessRules: AccessRule[];
  /** Sorted by schemaId. */
  mapping: MappingEntry[];
}

export interface UserGroupRecord extends UserGroupFields {
  teamId: number;
  workspaceId: number;
  environment: Environment;
  /** Bumped by every change; lets a conditional write detect that the row moved under it. */
  version: number;
  /** Bumped by every change of the group token: embed tokens minted under an earlier one are void. */
  tokenGeneration: number;
  /** The group's ancestors as the read found them, parent first (at most three). */
  ancestors: AncestorValues[];
  updatedAt: Timestamp;
}

export interface NewUserGroup extends UserGroupFields {
  tenant: Tenant;
  /**
   * The team_id an import asks to keep (docs/api.md#migrating-from-the-hosted-product): kept only when it is above every team_id the
   * deployment has issued, and then later ones are issued above it; otherwise the next is issued.
   */
  teamId?: number;
}

/** Fields a PUT (or an import) may replace; an absent key stays as it is. */
export interface UserGroupPatch {
  providedId?: string;
  name?: string;
  properties?: JsonObject | null;
  mapping?: MappingEntry[];
  /** A provided id links the group under that parent; null detaches it. */
  parentProvidedId?: string | null;
  isDemoGroup?: boolean;
  tags?: string[];
  /** [] clears them. */
  accessRules?: AccessRule[];
  /** Only an import that carries tokens sets these, always together. */
  tokenHash?: string;
  tokenCiphertext?: string;
}
