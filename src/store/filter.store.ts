/** SQL for each account's allow and block filters (services/outcomes/filters.service.ts). */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { AccountFilterRow, AccountFiltersTable, FilterMatch } from './schema/outcomes.schema.js';

/**
 * Inserts the filter, or, when the account has one for the same (match, value), changes its
 * action; returns the row as stored.
 */
export async function upsertFilter(
  db: Executor,
  row: Insertable<AccountFiltersTable>,
): Promise<AccountFilterRow> {
  return db
    .insertInto('account_filters')
    .values(row)
    .onConflict((oc) => oc.columns(['account_id', 'match', 'value']).doUpdateSet({ action: row.action }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listFilters(db: Executor, accountId: string): Promise<AccountFilterRow[]> {
  return db
    .selectFrom('account_filters')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** At most `limit` of the account's filters, in no order (the filters cache reads them whole). */
export async function someFilters(
  db: Executor,
  accountId: string,
  limit: number,
): Promise<AccountFilterRow[]> {
  return db
    .selectFrom('account_filters')
    .selectAll()
    .where('account_id', '=', accountId)
    .limit(limit)
    .execute();
}

export async function countFilters(db: Executor, accountId: string, match?: FilterMatch): Promise<number> {
  let q = db
    .selectFrom('account_filters')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId);
  if (match !== undefined) q = q.where('match', '=', match);
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Deletes the account's filter `id`: the row deleted, or null when the account holds none. */
export async function deleteFilter(
  db: Executor,
  accountId: string,
  id: string,
): Promise<AccountFilterRow | null> {
  const row = await db
    .deleteFrom('account_filters')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** What a group of addresses may match: their addresses, domains (with parents) and TLDs. */
export interface FilterProbe {
  emails: readonly string[];
  domains: readonly string[];
  tlds: readonly string[];
}

/**
 * The account's filters that match any of `probe`'s values, and every `mx` filter (matched by
 * the caller against MX host names): one read on the (account, match, value) index.
 */
export async function candidateFilters(
  db: Executor,
  accountId: string,
  probe: FilterProbe,
): Promise<AccountFilterRow[]> {
  return db
    .selectFrom('account_filters')
    .selectAll()
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        ...(probe.emails.length > 0
          ? [eb.and([eb('match', '=', 'email'), eb('value', 'in', [...probe.emails])])]
          : []),
        ...(probe.domains.length > 0
          ? [eb.and([eb('match', '=', 'domain'), eb('value', 'in', [...probe.domains])])]
          : []),
        ...(probe.tlds.length > 0
          ? [eb.and([eb('match', '=', 'tld'), eb('value', 'in', [...probe.tlds])])]
          : []),
        eb('match', '=', 'mx'),
      ]),
    )
    .execute();
}
