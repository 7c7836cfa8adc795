/**
 * SQL for two-factor sign-in (services/people/two-factor.service.ts): TOTP secrets, recovery codes,
 * sign-in challenges and the account's requirement.
 */
import { storeSecrets } from './backend.js';
import type { Executor } from './executor.js';
import type { MemberTwoFactorRow } from './schema/two-factor.schema.js';

export async function findTwoFactor(db: Executor, personId: string): Promise<MemberTwoFactorRow | undefined> {
  const row = await db
    .selectFrom('member_two_factor')
    .selectAll()
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row && { ...row, secret: storeSecrets(db).open('member_two_factor.secret', row.secret) };
}

/** Starts (or starts again) an enrolment: a new secret, not enabled yet. Never over an enabled one. */
export async function savePendingSecret(
  db: Executor,
  personId: string,
  plaintext: string,
  now: string,
): Promise<boolean> {
  // Sealed in its column (store/secret-box.ts).
  const secret = storeSecrets(db).seal('member_two_factor.secret', plaintext);
  const res = await db
    .insertInto('member_two_factor')
    .values({ person_id: personId, secret, created_at: now, enabled_at: null, last_step: null })
    .onConflict((oc) =>
      oc
        .column('person_id')
        .doUpdateSet({ secret, created_at: now, last_step: null })
        .where('member_two_factor.enabled_at', 'is', null),
    )
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Takes TOTP time step `step` for the member: true for exactly one caller however many present a
 * code of that step at once, and never for a step at or before the last one taken (no replay).
 * `enable`: also marks the secret enabled (the enrolment's first code).
 */
export async function takeStep(
  db: Executor,
  personId: string,
  step: number,
  enable: { now: string } | null,
): Promise<boolean> {
  let query = db
    .updateTable('member_two_factor')
    .set(enable ? { last_step: step, enabled_at: enable.now } : { last_step: step })
    .where('person_id', '=', personId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]));
  query = enable ? query.where('enabled_at', 'is', null) : query.where('enabled_at', 'is not', null);
  const res = await query.executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** Forgets the member's second factor and recovery codes; whether there was one. */
export async function deleteTwoFactor(db: Executor, personId: string): Promise<boolean> {
  await db.deleteFrom('member_recovery_codes').where('person_id', '=', personId).execute();
  await db.deleteFrom('sign_in_challenges').where('person_id', '=', personId).execute();
  const res = await db.deleteFrom('member_two_factor').where('person_id', '=', personId).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** Replaces the member's recovery codes with these hashes. */
export async function replaceRecoveryCodes(
  db: Executor,
  personId: string,
  hashes: readonly string[],
  now: string,
): Promise<void> {
  await db.deleteFrom('member_recovery_codes').where('person_id', '=', personId).execute();
  await db
    .insertInto('member_recovery_codes')
    .values(hashes.map((code_hash) => ({ code_hash, person_id: personId, created_at: now, used_at: null })))
    .execute();
}

/** Uses a recovery code up: true for exactly one caller, and only for the member's own unused code. */
export async function useRecoveryCode(
  db: Executor,
  personId: string,
  codeHash: string,
  now: string,
): Promise<boolean> {
  const res = await db
    .updateTable('member_recovery_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('person_id', '=', personId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

export async function countUnusedRecoveryCodes(db: Executor, personId: string): Promise<number> {
  const row = await db
    .selectFrom('member_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('person_id', '=', personId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertChallenge(
  db: Executor,
  row: { id: string; person_id: string; created_at: string; expires_at: string },
): Promise<void> {
  await db.insertInto('sign_in_challenges').values(row).execute();
}

/** The member of an unexpired challenge. */
export async function findChallenge(db: Executor, id: string, now: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('sign_in_challenges')
    .select('person_id')
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.person_id;
}

/** Uses a challenge up: true for exactly one caller. */
export async function deleteChallenge(db: Executor, id: string): Promise<boolean> {
  const res = await db.deleteFrom('sign_in_challenges').where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/**
 * Ends every open sign-in challenge of the person (a new password: a challenge earned with the
 * old one must not complete; issue 26).
 */
export async function deletePersonChallenges(db: Executor, personId: string): Promise<number> {
  const res = await db.deleteFrom('sign_in_challenges').where('person_id', '=', personId).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function deleteExpiredChallenges(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('sign_in_challenges').where('expires_at', '<=', now).execute();
}

export async function accountRequiresTwoFactor(db: Executor, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('accounts')
    .select('require_two_factor')
    .where('id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.require_two_factor ?? 0) === 1;
}

export async function setAccountRequiresTwoFactor(
  db: Executor,
  accountId: string,
  required: boolean,
): Promise<boolean> {
  const res = await db
    .updateTable('accounts')
    .set({ require_two_factor: required ? 1 : 0 })
    .where('id', '=', accountId)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}
