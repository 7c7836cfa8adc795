/** SQL for the `bootstrap` table (migration 0016): the first start's one row. */
import type { Executor } from './executor.js';
import type { BootstrapDelivery, BootstrapRow } from './schema/bootstrap.schema.js';

export const BOOTSTRAP_ID = 'first';

export async function findBootstrap(db: Executor): Promise<BootstrapRow | undefined> {
  return db.selectFrom('bootstrap').selectAll().where('id', '=', BOOTSTRAP_ID).executeTakeFirst();
}

/** Inserts the one row: false when another process inserted it first (it then bootstraps). */
export async function insertBootstrap(
  db: Executor,
  row: Pick<BootstrapRow, 'account_id' | 'live_key_id' | 'test_key_id' | 'created_at'>,
): Promise<boolean> {
  const result = await db
    .insertInto('bootstrap')
    .values({ id: BOOTSTRAP_ID, ...row, generation: 1, delivered_at: null, delivered_to: null })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Claims the completion of an undelivered bootstrap seen at `generation`, with its new keys:
 * false when another process claimed it first, or it was delivered meanwhile.
 */
export async function claimBootstrap(
  db: Executor,
  generation: number,
  keys: { live_key_id: string; test_key_id: string },
): Promise<boolean> {
  const result = await db
    .updateTable('bootstrap')
    .set({ ...keys, generation: generation + 1 })
    .where('id', '=', BOOTSTRAP_ID)
    .where('generation', '=', generation)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks the bootstrap of `generation` delivered: false when a later start replaced its keys. */
export async function markBootstrapDelivered(
  db: Executor,
  generation: number,
  at: string,
  to: BootstrapDelivery,
): Promise<boolean> {
  const result = await db
    .updateTable('bootstrap')
    .set({ delivered_at: at, delivered_to: to })
    .where('id', '=', BOOTSTRAP_ID)
    .where('generation', '=', generation)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
