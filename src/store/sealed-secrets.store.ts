/**
 * SQL over every sealed column at once (store/secret-box.ts): sealing again what an older version
 * stored in plaintext, and what a previous key sealed (a key rotation).
 */
import { sql } from 'kysely';
import { storeSecrets } from './backend.js';
import type { Executor } from './executor.js';
import type { SealedColumn } from './secret-box.js';

/**
 * Every sealed column: its label (the values' additional authenticated data, fixed for good) and
 * where it is now (a table renamed later keeps its label, or its values would no longer open).
 */
const SEALED_COLUMNS: readonly { label: SealedColumn; table: string; column: string }[] = [
  { label: 'accounts.webhook_secret', table: 'accounts', column: 'webhook_secret' },
  { label: 'member_two_factor.secret', table: 'member_two_factor', column: 'secret' },
  { label: 'outcome_sources.verify_key', table: 'outcome_sources', column: 'verify_key' },
];

/** Which stored values `resealSecrets` seals again. */
export type ResealScope =
  /** Plaintext values written before secrets were sealed. */
  | 'plaintext'
  /** Every value not sealed with the current key: plaintext, and values of a previous key. */
  | 'not-current-key';

/**
 * Seals again, with the current key, each value of the sealed columns in `scope`; the count per
 * column. A value is replaced only while it is still the one read (another process may seal it
 * at the same time), so the rows need no key column. A value that does not open throws
 * SecretKeyError and leaves the rest as they were.
 */
export async function resealSecrets(db: Executor, scope: ResealScope): Promise<Record<SealedColumn, number>> {
  const box = storeSecrets(db);
  const counts = {} as Record<SealedColumn, number>;
  // Sealed values start with this; substr compares case-sensitively on both backends (LIKE does not on SQLite).
  const keep = scope === 'plaintext' ? 'enc:' : `enc:v1:${box.currentKeyId()}:`;
  for (const { label: name, table, column } of SEALED_COLUMNS) {
    const ref = sql.ref(column);
    const { rows } = await sql<{ value: string }>`select ${ref} as value from ${sql.table(table)}
      where ${ref} is not null and substr(${ref}, 1, ${keep.length}) <> ${keep}`.execute(db);
    let resealed = 0;
    for (const { value } of rows) {
      const sealed = box.seal(name, box.open(name, value));
      const res =
        await sql`update ${sql.table(table)} set ${ref} = ${sealed} where ${ref} = ${value}`.execute(db);
      resealed += Number(res.numAffectedRows ?? 0n);
    }
    counts[name] = resealed;
  }
  return counts;
}

/** The ids of the keys that sealed the values of each sealed column (read from the values, `enc:v1:<id>:`). */
export async function sealingKeyIds(db: Executor): Promise<Record<SealedColumn, string[]>> {
  const ids = {} as Record<SealedColumn, string[]>;
  for (const { label: name, table, column } of SEALED_COLUMNS) {
    const ref = sql.ref(column);
    const { rows } = await sql<{
      id: string;
    }>`select distinct substr(${ref}, 8, 8) as id from ${sql.table(table)}
      where ${ref} is not null and substr(${ref}, 1, 7) = 'enc:v1:'`.execute(db);
    ids[name] = rows.map((r) => r.id);
  }
  return ids;
}
