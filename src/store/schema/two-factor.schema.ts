/**
 * Tables of two-factor sign-in (migration 0008; docs/dashboard.md, "Two-factor sign-in").
 * Migration 0008 also adds `require_two_factor` to the accounts table; declaring it here (the
 * intersection in store/schema.ts merges it into `accounts`) keeps accounts.schema.ts untouched.
 */
import type { Generated, Selectable } from 'kysely';

export interface MemberTwoFactorTable {
  /** The person's (migration 0010; a member's before). */
  person_id: string;
  /** The TOTP secret, base32 (docs/security.md, "Two-factor secrets"). */
  secret: string;
  created_at: string;
  /** Null while enrolment waits for its first code. */
  enabled_at: string | null;
  /** The highest TOTP time step accepted; a code of it or an earlier one is refused. */
  last_step: number | null;
}

export interface MemberRecoveryCodesTable {
  /** Hex SHA-256 of the normalised code. */
  code_hash: string;
  person_id: string;
  created_at: string;
  used_at: string | null;
}

export interface SignInChallengesTable {
  /** Hex SHA-256 of the challenge the browser holds between the password and the code. */
  id: string;
  person_id: string;
  created_at: string;
  expires_at: string;
}

export interface AccountTwoFactorColumns {
  /** 1: every member must sign in with two factors. */
  require_two_factor: Generated<number>;
}

export interface TwoFactorTables {
  member_two_factor: MemberTwoFactorTable;
  member_recovery_codes: MemberRecoveryCodesTable;
  sign_in_challenges: SignInChallengesTable;
  accounts: AccountTwoFactorColumns;
}

export type MemberTwoFactorRow = Selectable<MemberTwoFactorTable>;
