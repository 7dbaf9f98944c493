import type { Timestamp } from '../common.records.js';
import type { Environment, Tenant } from '../tenancy.js';

export interface DataSourceRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  providedId: string;
  name: string;
  schemaId: number;
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
  createdAt: Timestamp;
}
