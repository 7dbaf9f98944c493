import { initial } from './0001-initial.js';
import type { Migration } from '../../migration.js';

/** In version order; append only. */
export const MIGRATIONS: readonly Migration[] = [initial];
