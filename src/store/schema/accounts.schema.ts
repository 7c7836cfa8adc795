/**
 * Tables of accounts, API keys and usage (the API issue). Timestamps are ISO 8601 UTC strings,
 * booleans are integers 0/1 (see store/db.ts).
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface AccountsTable {
  id: string;
  email: string;
  plan: string;
  /** Per-account override of the plan's monthly quota (enterprise deals); null: the plan's. */
  quota_limit: number | null;
  /** Per-account override of the plan's requests per second; null: the plan's. */
  rate_limit: number | null;
  /** Also the billing anchor: periods start on this day of the month. */
  created_at: ColumnType<string, string, never>;
  updated_at: string;
  /** When an operator suspended the account (docs/operators.md); null: active. */
  suspended_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** The reason the operator gave, shown to the account's members; null when none was given. */
  suspended_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Per-account override of the plan's overage switch (1 on, 0 off); null: the plan's. */
  overage_enabled: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  kind: 'live' | 'test';
  name: string | null;
  /** `svc_live_` or `svc_test_`. */
  prefix: string;
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  key_hash: string;
  last4: string;
  /** Space-separated scopes. */
  scopes: string;
  created_at: ColumnType<string, string, never>;
  revoked_at: string | null;
  /** 1: a publishable key (docs/widget.md), 0: a secret key. */
  publishable: ColumnType<number, number | undefined, number>;
  /** Publishable keys: space-separated origins (`https://shop.example`); null otherwise. */
  allowed_origins: ColumnType<string | null, string | null | undefined, string | null>;
  /** Publishable keys: requests per second per visitor's address; null: the server's default. */
  visitor_rate_limit: ColumnType<number | null, number | null | undefined, number | null>;
  /** Publishable keys: requests per second of the key; null: the server's default. */
  key_rate_limit: ColumnType<number | null, number | null | undefined, number | null>;
  /** Publishable keys: verifications per UTC day; null: the server's default. */
  daily_cap: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Verifications of a publishable key per UTC day (its daily cap). */
export interface ApiKeyDaysTable {
  key_id: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  used: Generated<number>;
}

export interface UsagePeriodsTable {
  account_id: string;
  period_start: string;
  period_end: string;
  /** Verifications counted in the period, overage included. */
  used: Generated<number>;
  /** The part of `used` beyond the quota (only when overage is allowed). */
  overage_count: Generated<number>;
}

export interface AccountTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  api_key_days: ApiKeyDaysTable;
  usage_periods: UsagePeriodsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccountRow = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type UsagePeriodRow = Selectable<UsagePeriodsTable>;
