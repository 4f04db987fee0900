import type { DatabaseSchema } from '../../../libs/platform/src/index.js';
import { KEYS_MIGRATIONS } from '../../../libs/keys/src/index.js';

/** Entities and migrations of every context, in the order the migrations must run. */
export const DATABASE_SCHEMA: DatabaseSchema = {
  entities: [],
  migrations: [...KEYS_MIGRATIONS],
};
