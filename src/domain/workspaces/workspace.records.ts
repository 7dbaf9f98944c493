import type { Timestamp } from '../common.records.js';

export interface Workspace {
  id: number;
  name: string;
  createdAt: Timestamp;
}
