import type { Migration } from '../../migration.js';
import { initial } from './0001-initial.js';

/** In version order; append only. */
export const MIGRATIONS: readonly Migration[] = [initial];
