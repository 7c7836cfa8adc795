import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * What store functions take: the database or a transaction (Kysely's `Transaction` is a
 * `Kysely`), so that callers open transactions at the edge.
 */
export type Executor = Kysely<Database>;
