/**
 * Tables of the account dashboard (migration 0005; docs/dashboard.md). Timestamps are ISO 8601
 * UTC strings (see store/db.ts).
 */
import type { Generated, Selectable } from 'kysely';

export type MemberRole = 'owner' | 'member';

/** A person (migration 0010): one address, one password, one second factor, any number of accounts. */
export interface PeopleTable {
  /** `per_<base62>`. */
  id: string;
  /** Lower-cased; unique across the store. */
  email: string;
  /** `scrypt$…` (services/people/passwords.ts); null until the person first chooses one. */
  password_hash: string | null;
  created_at: string;
  /** When the person became an operator (`mailverdict operators add`); null: not one. */
  operator_since: string | null;
}

/** A change of a person's sign-in address waiting for the new address's link (migration 0019). */
export interface EmailChangesTable {
  /** Hex SHA-256 of the one-time token in the link. */
  token_hash: string;
  person_id: string;
  /** Lower-cased: the address the link sets. */
  new_email: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}
export type EmailChangeRow = Selectable<EmailChangesTable>;

/** A membership (migration 0010): a person in an account, with a role there. */
export interface MembersTable {
  /** `mem_<base62>`. */
  id: string;
  account_id: string;
  person_id: string;
  role: MemberRole;
  created_at: string;
  /** Null while the invitation is pending. */
  joined_at: string | null;
}

export interface DashboardSessionsTable {
  /** Hex SHA-256 of the cookie's secret. */
  id: string;
  person_id: string;
  /** The current membership (the account the session acts in); null once it is removed. */
  member_id: string | null;
  created_at: string;
  /** Moved forward at most once a minute (the idle expiry counts from it). */
  last_seen_at: string;
  /** Absolute end of the session, whatever its use. */
  expires_at: string;
  /** The browser's User-Agent at sign-in, shortened (migration 0009); null for older sessions. */
  user_agent: string | null;
  /** The client address at sign-in (migration 0009). */
  client_ip: string | null;
}

export type MemberTokenKind = 'invitation' | 'password_reset';

export interface MemberTokensTable {
  /** Hex SHA-256 of the one-time token in the link. */
  token_hash: string;
  person_id: string;
  /** The membership an invitation is for; null for a password reset (the person's). */
  member_id: string | null;
  kind: MemberTokenKind;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** The member who made the invitation; null for the operator's and the bootstrap's links. */
  invited_by: string | null;
}

export interface UsageDaysTable {
  account_id: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  /** Live single verifications counted that day. */
  single: Generated<number>;
  /** Live batch addresses counted that day, less what cancelled jobs gave back. */
  batch: Generated<number>;
}

export interface ApiKeyUsageTable {
  key_id: string;
  last_used_at: string;
}

export interface ListUploadsTable {
  /** `upl_<base62>`. */
  id: string;
  account_id: string;
  /** Null while the file is being read; set in the transaction that stores the job. */
  job_id: string | null;
  /** The file's name as the user gave it. */
  name: string;
  /** JSON array of the first row's cells when the file had a header row; null otherwise. */
  header: string | null;
  email_column: number;
  /** The widest row's number of cells (the header's included). */
  column_count: number;
  created_at: string;
}

export interface ListUploadRowsTable {
  upload_id: string;
  /** The job chunk these rows belong to. */
  seq: number;
  job_id: string | null;
  /** JSON array, one entry per address of the chunk: the row's cells without the address. */
  cells: string;
}

export interface JobResultCountsTable {
  job_id: string;
  /** JSON object: verdict → count. */
  by_status: string;
  /** JSON object: reason → count (rows with a reason only). */
  by_reason: string;
}

export interface SignInFailuresTable {
  /** Hex SHA-256 of the lower-cased address tried. */
  key: string;
  window_start: string;
  failures: number;
}

export interface DashboardTables {
  people: PeopleTable;
  email_changes: EmailChangesTable;
  members: MembersTable;
  dashboard_sessions: DashboardSessionsTable;
  member_tokens: MemberTokensTable;
  usage_days: UsageDaysTable;
  api_key_usage: ApiKeyUsageTable;
  list_uploads: ListUploadsTable;
  list_upload_rows: ListUploadRowsTable;
  job_result_counts: JobResultCountsTable;
  sign_in_failures: SignInFailuresTable;
}

export type PersonRow = Selectable<PeopleTable>;
export type MemberRow = Selectable<MembersTable>;
export type SessionRow = Selectable<DashboardSessionsTable>;
export type MemberTokenRow = Selectable<MemberTokensTable>;
export type UsageDayRow = Selectable<UsageDaysTable>;
export type ListUploadRow = Selectable<ListUploadsTable>;
