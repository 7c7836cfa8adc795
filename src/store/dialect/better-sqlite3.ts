/**
 * Which better-sqlite3 build this Node.js can run: the package every SQLite file of the store
 * is opened with (the dialect, `store copy`).
 *
 * better-sqlite3 12 derives its Statement from node::ObjectWrap; from Node 24.19 on, an
 * ObjectWrap finalised by a background GC aborts the process (`Assertion failed: (env) !=
 * nullptr` in RemoveEnvironmentCleanupHook, seen here running the test suite on Node 24.21).
 * better-sqlite3 13 fixes that but needs Node >= 22 (it segfaults on Node 20). 13 is an
 * optional dependency under the alias `better-sqlite3-v13` (its prebuilt binaries inside the
 * package): npm installs it on Node >= 22 and skips it without a warning on Node 20, whose
 * engine it does not support (a required dependency printed an EBADENGINE warning there). The
 * process picks the one its Node runs: 13 on Node >= 22, 12 on Node 20.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** The package name of the build for `nodeMajor` (exported for the test). */
export function sqliteDriverPackage(nodeMajor: number = NODE_MAJOR): string {
  return nodeMajor >= 22 ? 'better-sqlite3-v13' : 'better-sqlite3';
}

function load(name: string): typeof BetterSqlite3 {
  try {
    return require(name) as typeof BetterSqlite3;
  } catch (err) {
    if (name !== 'better-sqlite3-v13' || (err as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new Error(
      `better-sqlite3 13 (the optional dependency better-sqlite3-v13) is not installed, and Node ${process.versions.node} needs it: ` +
        'run `npm ci` again with this Node.js (npm skips it when installing with Node 20)',
      { cause: err },
    );
  }
}

/** The better-sqlite3 Database constructor for this Node.js. */
export const Sqlite: typeof BetterSqlite3 = load(sqliteDriverPackage());
