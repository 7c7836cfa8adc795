/**
 * Which store failures are transient: worth a 503 with Retry-After (the client retries and loses
 * nothing, since a failed statement rolls its transaction back) rather than a 500. A table, like
 * graphile-worker's retryable SQLSTATEs.
 */

/** SQLite result codes (primary, or the prefix of an extended code) that a retry can cure. */
const TRANSIENT_SQLITE = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_PROTOCOL',
  'SQLITE_CANTOPEN',
];

/**
 * PostgreSQL SQLSTATEs and socket errors of a store connection that a retry can cure: connection
 * exceptions (08), insufficient resources (53), operator intervention / shutdown (57P01-57P03),
 * serialization failures and deadlocks (40001, 40P01).
 */
const TRANSIENT_PG = /^(08|53|57P0[123]|40001|40P01)/;
const TRANSIENT_SOCKET = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'];

export function isTransientStoreError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (TRANSIENT_SQLITE.some((c) => code === c || code.startsWith(`${c}_`))) return true;
  return TRANSIENT_PG.test(code) || TRANSIENT_SOCKET.includes(code);
}
