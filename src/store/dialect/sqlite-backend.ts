/** SQLite's store backend operations (store/backend.ts). */
import { sql } from 'kysely';
import type { ChangeWatch, StoreBackend } from '../backend.js';
import { claimChunk, findClaimableChunks } from '../chunk.store.js';
import { insertKeyIfBelow } from '../key.store.js';

/**
 * One connection runs every statement in turn, so a claim cannot race inside this process, and
 * IMMEDIATE transactions serialise writers across processes: a candidate query, then a
 * conditional UPDATE per candidate that only succeeds while the chunk is still free.
 */
export function sqliteBackend(changes: ChangeWatch, onWork: StoreBackend['onWork']): StoreBackend {
  return Object.freeze({
    name: 'sqlite' as const,
    changes,
    onWork,
    migrationSchema: () => Promise.resolve(undefined),
    async migrationsRun(db) {
      const { rows } = await sql<{ present: number }>`
        select count(*) as present from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(
        db,
      );
      if (rows[0]?.present !== 1) return null;
      const names = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
      return names.rows.map((r) => r.name);
    },
    async claimChunk(db, claim) {
      for (const ref of await findClaimableChunks(db, claim.now, 8)) {
        if (claim.inFlight.has(`${ref.job_id}/${ref.seq}`)) continue;
        const chunk = await claimChunk(db, ref, claim.owner, claim.now, claim.expiresAt);
        if (chunk) return chunk;
      }
      return undefined;
    },
    // One INSERT ... SELECT ... WHERE count < max: SQLite runs one writer at a time.
    insertKeyWithinLimit: insertKeyIfBelow,
  } satisfies StoreBackend);
}
