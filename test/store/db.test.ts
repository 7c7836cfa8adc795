import { Sqlite } from '../../src/store/dialect/better-sqlite3.js';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openTestStore, type TestStore } from '../kit/store-harness.js';

describe('the SQLite store', () => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('opens one WAL-mode file with foreign keys on', async () => {
    store = await openTestStore();
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    expect(mode.rows[0]?.journal_mode).toBe('wal');
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db);
    expect(fk.rows[0]?.foreign_keys).toBe(1);
  });

  it('keeps its data directory and files readable by their owner only (0700, 0600)', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'mv-modes-')), 'data');
    const db = openDatabase({ dataDir });
    try {
      await migrateToLatest(db);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const name of ['mailverdict.db', 'mailverdict.db-wal', 'mailverdict.db-shm'])
        expect(statSync(join(dataDir, name)).mode & 0o777, name).toBe(0o600);
    } finally {
      await db.destroy();
    }
    // A file that an earlier version left readable by others is narrowed at the next open.
    chmodSync(join(dataDir, 'mailverdict.db'), 0o644);
    await openDatabase({ dataDir }).destroy();
    expect(statSync(join(dataDir, 'mailverdict.db')).mode & 0o777).toBe(0o600);
  });

  it('runs migrations idempotently', async () => {
    store = await openTestStore();
    await migrateToLatest(store.db);
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
      store.db,
    );
    expect(tables.rows.map((r) => r.name)).toEqual(
      expect.arrayContaining(['accounts', 'api_keys', 'usage_periods']),
    );
  });

  it('refuses a key for an account that does not exist (foreign key)', async () => {
    store = await openTestStore();
    await expect(
      store.db
        .insertInto('api_keys')
        .values({
          id: 'key_x',
          account_id: 'acct_missing',
          kind: 'live',
          name: null,
          prefix: 'svc_live_',
          key_hash: 'h',
          last4: 'abcd',
          scopes: 'verify',
          created_at: new Date().toISOString(),
        })
        .execute(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });

  it('takes the write lock when a transaction begins, so another process cannot commit in between', async () => {
    store = await openTestStore();
    const other = new Sqlite(join(store.dir, 'mailverdict.db'), { timeout: 0 });
    try {
      await store.db.transaction().execute(async (trx) => {
        await trx.selectFrom('accounts').select('id').execute();
        // A deferred transaction would still let the other connection write here, and then fail
        // with SQLITE_BUSY on its own first write; an immediate one already holds the lock.
        expect(() => other.exec('begin immediate')).toThrow(/locked|busy/i);
      });
      other.exec('begin immediate');
      other.exec('rollback');
    } finally {
      other.close();
    }
  });
});
