/** A migrated store on a real SQLite file in a temp directory. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';

export interface TestStore {
  dir: string;
  db: Kysely<Database>;
  close(): Promise<void>;
}

export async function openTestStore(): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-store-'));
  const db = openDatabase({ dataDir: dir });
  await migrateToLatest(db);
  return {
    dir,
    db,
    async close() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
