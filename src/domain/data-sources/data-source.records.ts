import type { Timestamp } from '../common.records.js';
import type { Environment, Tenant } from '../tenancy.js';

export interface DataSourceRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  providedId: string;
  name: string;
  schemaId: number;
  /** Mappable from every environment of the workspace, not only its own (`environment`). */
  shared: boolean;
  createdAt: Timestamp;
}

export interface DataSourcePatch {
  providedId?: string;
  name?: string;
  schemaId?: number;
}

export interface NewDataSource {
  tenant: Tenant;
  /** The number chosen for it, else the workspace's next. */
  id?: number;
  providedId: string;
  name: string;
  schemaId: number;
  /** Mappable from every environment of the workspace; false when not given. */
  shared?: boolean;
  createdAt: Timestamp;
}
