/** SQL for the `accounts` table. */
import type { Executor } from './executor.js';
import type { AccountRow, AccountUpdate, NewAccountRow } from './schema/accounts.schema.js';

export async function insertAccount(db: Executor, row: NewAccountRow): Promise<AccountRow> {
  return db.insertInto('accounts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findAccountById(db: Executor, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Updates the given columns; returns the new row, or undefined when there is no such account. */
export async function updateAccount(
  db: Executor,
  id: string,
  changes: AccountUpdate,
): Promise<AccountRow | undefined> {
  return db.updateTable('accounts').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function countAccounts(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
