/**
 * A store that fails on demand: the real SQLite file through Kysely, with a driver wrapper that
 * throws the error SQLite itself would (same `code`) on the statements chosen. Fault injection at
 * the driver seam, never by mocking the service under test.
 */
import {
  Kysely,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { createSqliteDialect } from '../../src/store/dialect/sqlite-dialect.js';
import { loadSecretBox } from '../../src/store/secret-keys.js';
import { databasePath } from '../../src/store/db.js';
import type { Database } from '../../src/store/schema.js';

export type FaultCode = 'SQLITE_FULL' | 'SQLITE_BUSY' | 'SQLITE_IOERR';

const MESSAGES: Record<FaultCode, string> = {
  SQLITE_FULL: 'database or disk is full',
  SQLITE_BUSY: 'database is locked',
  SQLITE_IOERR: 'disk I/O error',
};

export interface FaultyStore {
  db: Kysely<Database>;
  /** Fail statements matching `which` ('write': INSERT/UPDATE/DELETE; 'any') with `code`; null heals. */
  fail(code: FaultCode | null, which?: 'write' | 'any'): void;
  /** Statements failed so far. */
  readonly failures: number;
  close(): Promise<void>;
}

export function openFaultyStore(dataDir: string): FaultyStore {
  const inner = createSqliteDialect(databasePath(dataDir), [], loadSecretBox({ dataDir }));
  let armed: { code: FaultCode; which: 'write' | 'any' } | null = null;
  let failures = 0;
  const check = (query: CompiledQuery): void => {
    if (armed === null) return;
    const write = /^\s*(insert|update|delete)\b/i.test(query.sql);
    if (armed.which === 'write' && !write) return;
    failures++;
    throw Object.assign(new Error(MESSAGES[armed.code]), { code: armed.code });
  };
  const wrapConnection = (c: DatabaseConnection): DatabaseConnection => ({
    executeQuery: <R>(q: CompiledQuery): Promise<QueryResult<R>> => {
      check(q);
      return c.executeQuery<R>(q);
    },
    streamQuery: <R>(q: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> => {
      check(q);
      return c.streamQuery<R>(q, chunkSize);
    },
  });
  const dialect: Dialect = {
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createDriver(): Driver {
      const driver = inner.createDriver();
      const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
      const outer = (c: DatabaseConnection) => {
        let w = wrapped.get(c);
        if (!w) {
          w = wrapConnection(c);
          wrapped.set(c, w);
        }
        return w;
      };
      const innerOf = new WeakMap<DatabaseConnection, DatabaseConnection>();
      return {
        init: () => driver.init(),
        acquireConnection: async () => {
          const c = await driver.acquireConnection();
          const w = outer(c);
          innerOf.set(w, c);
          return w;
        },
        beginTransaction: (c: DatabaseConnection, s: TransactionSettings) =>
          driver.beginTransaction(innerOf.get(c)!, s),
        commitTransaction: (c: DatabaseConnection) => driver.commitTransaction(innerOf.get(c)!),
        rollbackTransaction: (c: DatabaseConnection) => driver.rollbackTransaction(innerOf.get(c)!),
        releaseConnection: (c: DatabaseConnection) => driver.releaseConnection(innerOf.get(c)!),
        destroy: () => driver.destroy(),
      };
    },
  };
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    fail(code, which = 'write') {
      armed = code === null ? null : { code, which };
    },
    get failures() {
      return failures;
    },
    close: () => db.destroy(),
  };
}
