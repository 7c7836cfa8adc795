/**
 * Whether an SQL text names one of `tables` as a whole word (`accounts` is not found in
 * `account_id`), quoted or not. Both dialects use it to notice this process's own writes to the
 * tables that in-memory caches read.
 */
export function namesAnyTable(tables: readonly string[]): (sql: string) => boolean {
  const patterns = tables.map((t) => new RegExp(`(^|[^a-z0-9_])${t}($|[^a-z0-9_])`, 'i'));
  return (sql) => patterns.some((p) => p.test(sql));
}
