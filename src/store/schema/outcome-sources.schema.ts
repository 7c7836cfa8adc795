/** The mail systems an account's outcomes come from (migration 0020; docs/outcomes.md, "Mail systems"). */
import type { ColumnType, Selectable } from 'kysely';

export type EspProvider = 'ses' | 'sendgrid' | 'mailgun' | 'postmark';

export interface OutcomeSourcesTable {
  /** `osrc_<base62>`. */
  id: string;
  account_id: string;
  provider: EspProvider;
  /** The account's own name for it; null when none was given. */
  label: string | null;
  /** SHA-256 (hex) of the URL's token. */
  token_hash: string;
  /** SendGrid's public key or Mailgun's signing key, sealed (`outcome_sources.verify_key`); null otherwise. */
  verify_key: string | null;
  /** SHA-256 (hex) of the basic-auth password Postmark sends; null for the others. */
  password_hash: string | null;
  /** SES: the SNS topic the source accepts, pinned by the first subscription confirmed. */
  topic_arn: string | null;
  events_taken: ColumnType<number, number | undefined, number>;
  events_ignored: ColumnType<number, number | undefined, number>;
  last_event_at: string | null;
  created_at: string;
}

/** A Mailgun token seen, with its body, until it is too old to be taken again. */
export interface OutcomeHookNoncesTable {
  source_id: string;
  nonce: string;
  /** SHA-256 (hex) of the body the token came with: the same body again is a retry, another one a replay. */
  body_hash: string;
  expires_at: string;
}

export interface OutcomeSourceTables {
  outcome_sources: OutcomeSourcesTable;
  outcome_hook_nonces: OutcomeHookNoncesTable;
}

export type OutcomeSourceRow = Selectable<OutcomeSourcesTable>;
