/** Delivery outcomes of each account (migration 0017; docs/outcomes.md). */
import type { Selectable } from 'kysely';

export interface OutcomeEventsTable {
  /** `out_<base62>`. */
  id: string;
  account_id: string;
  /** Keyed hash of the address (services/outcomes/address-key.ts); never the address itself. */
  address_key: string;
  /** The address's domain, lower-cased and IDNA. */
  domain: string;
  /** One of OUTCOME_TYPES (services/outcomes/outcome-types.ts). */
  type: string;
  /** When it happened, ISO 8601 UTC with milliseconds. */
  at: string;
  /** Where it came from: `api`, `message`, an ESP's name, `upload`. */
  source: string;
  /** The sender's own id of the event (an ESP's message or event id); '' when none was given. */
  source_id: string;
  /** A short diagnostic (status code and text), at most 300 characters. */
  detail: string | null;
  created_at: string;
}

/**
 * The latest verdict of a live verification per (account, address) (migration 0021;
 * docs/outcomes.md, "How accurate are we?").
 */
export interface VerdictLogTable {
  account_id: string;
  /** Keyed hash of the address (services/outcomes/address-key.ts); never the address itself. */
  address_key: string;
  status: string;
  /** The verdict's reason; '' for none (so that the key of a group is never null). */
  reason: string;
  score: number;
  /** `checks.mx.provider`; '' for none. */
  provider: string;
  /** When this verdict (status and reason) was first given, with no other in between; ISO UTC. */
  since: string;
  /** When it was last given; ISO UTC. */
  verified_at: string;
}

export interface OutcomeTables {
  outcome_events: OutcomeEventsTable;
  verdict_log: VerdictLogTable;
}

export type OutcomeEventRow = Selectable<OutcomeEventsTable>;

export type FilterAction = 'allow' | 'block';
export type FilterMatch = 'email' | 'domain' | 'mx' | 'tld';

/** An account's allow and block filters (migration 0018; docs/outcomes.md, "Filters"). */
export interface AccountFiltersTable {
  /** `flt_<base62>`. */
  id: string;
  account_id: string;
  action: FilterAction;
  match: FilterMatch;
  /** Normalised (services/outcomes/filters.service.ts): lower-case, IDNA. */
  value: string;
  created_at: string;
}

export interface FilterTables {
  account_filters: AccountFiltersTable;
}

export type AccountFilterRow = Selectable<AccountFiltersTable>;
