/**
 * An account's allow and block filters (docs/outcomes.md, "Filters"): a value of one kind
 * (`email`, `domain`, `mx`, `tld`) allowed or blocked. They decide before any network check, the
 * most specific match winning: the address, then its domain (the longest matching parent first),
 * then its top-level domain, then one of its MX hosts (which needs the MX look-up, nothing more).
 */
import { randomBase62 } from '../ids.js';
import { createStoreMemo } from '../store-memo.js';
import { parsedOf, type AddressInput } from './address-key.js';
import type { Clock } from '../../clock.js';
import { addressIdentity, parseAddress } from '../../engine/syntax.js';
import type { MxRecordInfo } from '../../engine/types.js';
import { AppError } from '../../errors.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import { refuseIfSuspended } from '../accounts/accounts.service.js';
import { recordAudit, type AuditDetails, type ChangeBy } from '../accounts/audit.service.js';
import {
  candidateFilters,
  countFilters,
  someFilters,
  deleteFilter as deleteFilterRow,
  listFilters as listFilterRows,
  upsertFilter,
} from '../../store/filter.store.js';
import type { AccountFilterRow, FilterAction, FilterMatch } from '../../store/schema/outcomes.schema.js';

export type { FilterAction, FilterMatch };
export const FILTER_ACTIONS = ['allow', 'block'] as const satisfies readonly FilterAction[];
export const FILTER_MATCHES = ['email', 'domain', 'mx', 'tld'] as const satisfies readonly FilterMatch[];

/** Filters an account may hold. */
export const MAX_FILTERS = 10_000;
/** `mx` filters an account may hold: every one is compared with the MX hosts of each address. */
export const MAX_MX_FILTERS = 100;

export interface FilterView {
  id: string;
  action: FilterAction;
  match: FilterMatch;
  value: string;
  created_at: string;
}

function view(row: AccountFilterRow): FilterView {
  return { id: row.id, action: row.action, match: row.match, value: row.value, created_at: row.created_at };
}

/** The stored form of `value` for `match`, or invalid_request saying why. */
export function normaliseFilterValue(match: FilterMatch, raw: string): string {
  const value = raw.trim();
  const refuse = (why: string): never => {
    throw new AppError('invalid_request', `value: ${why}`);
  };
  switch (match) {
    case 'email': {
      const parsed = parseAddress(value);
      if (!parsed.ok) return refuse(`not an e-mail address (${parsed.error})`);
      return addressIdentity(parsed, 'case-folded');
    }
    case 'domain':
    case 'mx': {
      const name = value.replace(/^@/, '').replace(/\.$/, '');
      const parsed = parseAddress(`x@${name}`);
      if (!parsed.ok || parsed.literal) return refuse(`not a ${match === 'mx' ? 'host' : 'domain'} name`);
      return parsed.domain;
    }
    case 'tld': {
      const name = value.replace(/^\./, '').replace(/\.$/, '');
      if (name.includes('.')) return refuse('a top-level domain is one label (com, io, xn--p1ai)');
      const parsed = parseAddress(`x@example.${name}`);
      if (!parsed.ok) return refuse('not a top-level domain');
      return parsed.domain.slice('example.'.length);
    }
  }
}

export interface FilterInput {
  accountId: string;
  action: FilterAction;
  match: FilterMatch;
  value: string;
}

/** Adds a filter; an existing one for the same (match, value) takes the new action. */
export async function createFilter(db: Executor, clock: Clock, input: FilterInput): Promise<FilterView> {
  const value = normaliseFilterValue(input.match, input.value);
  return inTransaction(db, async (trx) => {
    if ((await countFilters(trx, input.accountId)) >= MAX_FILTERS)
      throw new AppError(
        'invalid_request',
        `an account holds at most ${MAX_FILTERS} filters; delete some first`,
      );
    if (input.match === 'mx' && (await countFilters(trx, input.accountId, 'mx')) >= MAX_MX_FILTERS)
      throw new AppError('invalid_request', `an account holds at most ${MAX_MX_FILTERS} mx filters`);
    const row = await upsertFilter(trx, {
      id: `flt_${randomBase62(16)}`,
      account_id: input.accountId,
      action: input.action,
      match: input.match,
      value,
      created_at: clock.now().toISOString(),
    });
    return view(row);
  });
}

export async function listFilters(db: Executor, accountId: string): Promise<FilterView[]> {
  return (await listFilterRows(db, accountId)).map(view);
}

/** Deletes the account's filter and answers what it was; not_found when it holds none with that id. */
export async function deleteFilter(db: Executor, accountId: string, id: string): Promise<FilterView> {
  const row = await deleteFilterRow(db, accountId, id);
  if (row === null) throw new AppError('not_found', `no filter ${id}`);
  return view(row);
}

/**
 * What the security log keeps of a filter. An `email` filter's value is a person's address, which
 * the log would keep for its whole retention after the filter is gone: it keeps the domain only.
 */
function auditDetails(filter: FilterView): AuditDetails {
  const value =
    filter.match === 'email' ? `*@${filter.value.slice(filter.value.lastIndexOf('@') + 1)}` : filter.value;
  return { filter_id: filter.id, action: filter.action, match: filter.match, value };
}

/**
 * createFilter as a person does it (the dashboard): refused while the account is suspended (for a
 * member; the operator's goes through), the filter and its `filter_created` entry in one transaction.
 */
export async function createFilterBy(
  db: Executor,
  clock: Clock,
  input: FilterInput,
  by: ChangeBy,
): Promise<FilterView> {
  return inTransaction(db, async (trx) => {
    if (by.actor.kind === 'member') await refuseIfSuspended(trx, input.accountId);
    const filter = await createFilter(trx, clock, input);
    await recordAudit(trx, clock, {
      accountId: input.accountId,
      type: 'filter_created',
      ...by,
      details: auditDetails(filter),
    });
    return filter;
  });
}

/** deleteFilter as a person does it: the same suspension check, the deletion and its entry in one transaction. */
export async function deleteFilterBy(
  db: Executor,
  clock: Clock,
  accountId: string,
  id: string,
  by: ChangeBy,
): Promise<FilterView> {
  return inTransaction(db, async (trx) => {
    if (by.actor.kind === 'member') await refuseIfSuspended(trx, accountId);
    const filter = await deleteFilter(trx, accountId, id);
    await recordAudit(trx, clock, {
      accountId,
      type: 'filter_deleted',
      ...by,
      details: auditDetails(filter),
    });
    return filter;
  });
}

/** What filters know of one address before any look-up. */
interface Parts {
  email: string;
  /** The domain, then its parents down to two labels. */
  domains: string[];
  tld: string;
}

function partsOf(email: AddressInput): Parts | null {
  const parsed = parsedOf(email);
  if (!parsed.ok || parsed.literal) return null;
  const labels = parsed.domain.split('.');
  const domains: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) domains.push(labels.slice(i).join('.'));
  return {
    email: addressIdentity(parsed, 'case-folded'),
    domains,
    tld: labels[labels.length - 1]!,
  };
}

/** An account's filters for a group of addresses, read once. */
export interface FilterSet {
  /** The filter that decides the address without a look-up, or null. */
  match(email: AddressInput): AccountFilterRow | null;
  /** Whether `mx` filters exist, so that an undecided address needs its MX look-up. */
  readonly hasMx: boolean;
  /** The `mx` filter matching one of `records`, or null. */
  matchMx(records: readonly MxRecordInfo[]): AccountFilterRow | null;
}

const NO_FILTERS: FilterSet = { match: () => null, hasMx: false, matchMx: () => null };

/**
 * The filters of accounts read whole, kept in memory while the store's change token stays the
 * same (store-memo.ts; `account_filters` is watched): every live verification asks the filters,
 * and most accounts have none or few, so the read is skipped while nothing changed
 * (docs/outcomes.md, "What it costs"). An account with more than CACHED_FILTERS_PER_ACCOUNT
 * filters is read for each group of addresses instead (its candidates only).
 */
export const CACHED_FILTERS_PER_ACCOUNT = 1_000;
const filtersMemo = createStoreMemo<AccountFilterRow[] | 'too_many'>(10_000);

/** The account's filters whole from memory (or read now, and kept); null when too many to keep. */
async function cachedFilters(db: Executor, accountId: string): Promise<AccountFilterRow[] | null> {
  const memo = filtersMemo.current(db);
  if (memo === null) return null;
  const kept = memo.entries.get(accountId);
  if (kept !== undefined) return kept === 'too_many' ? null : kept;
  const rows = await someFilters(db, accountId, CACHED_FILTERS_PER_ACCOUNT + 1);
  const entry = rows.length > CACHED_FILTERS_PER_ACCOUNT ? 'too_many' : rows;
  filtersMemo.keep(db, memo.token, accountId, entry);
  return entry === 'too_many' ? null : entry;
}

/** Reads the account's filters that may match `emails` (one read, or none while they are cached). */
export async function filterSetFor(
  db: Executor,
  accountId: string,
  emails: readonly AddressInput[],
): Promise<FilterSet> {
  const parts = emails.map(partsOf);
  const known = parts.filter((p): p is Parts => p !== null);
  if (known.length === 0) return NO_FILTERS;
  const rows =
    (await cachedFilters(db, accountId)) ??
    (await candidateFilters(db, accountId, {
      emails: [...new Set(known.map((p) => p.email))],
      domains: [...new Set(known.flatMap((p) => p.domains))],
      tlds: [...new Set(known.map((p) => p.tld))],
    }));
  if (rows.length === 0) return NO_FILTERS;
  const byKey = new Map(rows.map((r) => [`${r.match}\0${r.value}`, r]));
  const mx = rows.filter((r) => r.match === 'mx');
  return {
    hasMx: mx.length > 0,
    match(email) {
      const p = partsOf(email);
      if (p === null) return null;
      return (
        byKey.get(`email\0${p.email}`) ??
        p.domains.map((d) => byKey.get(`domain\0${d}`)).find((r) => r !== undefined) ??
        byKey.get(`tld\0${p.tld}`) ??
        null
      );
    },
    matchMx(records) {
      for (const record of records) {
        const host = record.exchange.toLowerCase().replace(/\.$/, '');
        const found = mx.find((f) => host === f.value || host.endsWith(`.${f.value}`));
        if (found) return found;
      }
      return null;
    },
  };
}
