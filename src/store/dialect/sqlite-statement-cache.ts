/**
 * The SQLite connection as Kysely sees it, with prepared statements reused by SQL text, and the
 * hook through which the change watch and the work watch see each statement about to run.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Statements kept prepared; beyond this the oldest is dropped (batch inserts vary in shape). */
const STATEMENT_CACHE_SIZE = 256;

/** Told each time a statement it matches (decided once per SQL text) is about to run. */
export interface StatementWatcher {
  matches(sql: string, statement: BetterSqlite3.Statement): boolean;
  readonly beforeRun: () => void;
}

interface CachedStatement {
  statement: BetterSqlite3.Statement;
  /** The beforeRun of the watchers that match it. */
  beforeRun: (() => void)[];
}

/**
 * Kysely prepares every query anew; preparing is most of the cost of a small query on
 * better-sqlite3 (about 10% of a POST /v1/verify request's CPU time in a profile of
 * `npm run bench:api`). Statements are reused by SQL text, except one still being iterated
 * (a streamed result), which gets a fresh statement. Kysely prepares a statement just before
 * running it, so the watchers that match it are told then.
 */
export function withStatementCache(
  sqlite: BetterSqlite3.Database,
  watchers: readonly StatementWatcher[],
): SqliteDatabase {
  const cache = new Map<string, CachedStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) {
        for (const hook of cached.beforeRun) hook();
        if (!cached.statement.busy) return cached.statement;
        return sqlite.prepare(sql);
      }
      const statement = sqlite.prepare(sql);
      const entry = {
        statement,
        beforeRun: watchers.filter((w) => w.matches(sql, statement)).map((w) => w.beforeRun),
      };
      for (const hook of entry.beforeRun) hook();
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(sql, entry);
      return statement;
    },
  };
}
