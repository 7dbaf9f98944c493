import type { Timestamp } from '../common.records.js';

export interface SchemaRecord {
  id: number;
  workspaceId: number;
  name: string;
  createdAt: Timestamp;
}
