/**
 * A person changes their sign-in address (docs/dashboard.md, "Changing the sign-in address";
 * issue 25). Any member may, since the address is the person's own, not an account's: the
 * password is asked (a session left open must not be enough), a wrong one counts like a failed
 * sign-in. Without an SMTP relay the address changes at once; with one, the new address gets a
 * one-time link (valid 24 hours, only its SHA-256 stored) and the change is made when it is
 * opened, so that a mistyped address cannot lock the person out.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import {
  findPersonByEmail,
  findPersonById,
  findUsableEmailChange,
  insertEmailChange,
  setPersonEmail,
  useEmailChange,
} from '../../store/person.store.js';
import { FAILURE_WINDOW_MS, failureKey, forgetAttempts, reserveAttempt } from './failure-budget.js';
import type { MemberMailer } from './member-mail.js';
import { LINK_TTL_MS, hashToken, normalizeEmail } from './members.service.js';
import { verifyPassword } from './passwords.js';

export interface EmailChangeDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl'>;
  /** Null: no relay configured, the change is made at once. */
  mailer: MemberMailer | null;
  logger: Pick<Logger, 'warn'>;
}

/** Changed at once (no relay), or waiting for the link e-mailed to the new address. */
export type EmailChangeOutcome =
  | { status: 'changed'; email: string }
  | { status: 'confirm_by_link'; email: string; emailed: boolean; expires_at: string };

const UNUSABLE_LINK = 'this link is not valid: it was used, it expired, or a newer one replaced it';
const TAKEN = 'that address is the sign-in address of another person';

/** The page the link opens; the token travels in the fragment, as in every dashboard link. */
export function emailChangeLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/confirm-email#${token}`;
}

export async function requestEmailChange(
  deps: EmailChangeDeps,
  input: { personId: string; password: string; newEmail: string; failureLimit: number },
): Promise<EmailChangeOutcome> {
  const now = deps.clock.now();
  const key = failureKey(`password-change:${input.personId}`);
  await reserveAttempt(
    deps.db,
    key,
    { limit: input.failureLimit, windowMs: FAILURE_WINDOW_MS, what: 'wrong current passwords' },
    now,
  );
  const person = await findPersonById(deps.db, input.personId);
  if (!person?.password_hash || !(await verifyPassword(input.password, person.password_hash)))
    throw new AppError('invalid_credentials', 'the password is not correct');
  await forgetAttempts(deps.db, key);
  const email = normalizeEmail(input.newEmail);
  if (email === person.email) throw new AppError('invalid_request', 'that is your sign-in address already');
  if (await findPersonByEmail(deps.db, email)) throw new AppError('member_exists', TAKEN);
  if (deps.mailer === null) {
    await setPersonEmail(deps.db, person.id, email);
    return { status: 'changed', email };
  }
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS).toISOString();
  await insertEmailChange(deps.db, {
    token_hash: hashToken(token),
    person_id: person.id,
    new_email: email,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    used_at: null,
  });
  let emailed = false;
  try {
    await deps.mailer.send(
      email,
      'email_change',
      emailChangeLink(deps.config.publicBaseUrl, token),
      expiresAt,
    );
    emailed = true;
  } catch (err) {
    deps.logger.warn({ err }, 'the relay did not take the e-mail that confirms a new sign-in address');
  }
  return { status: 'confirm_by_link', email, emailed, expires_at: expiresAt };
}

/** Opens the link: the person signs in with the new address from now on. 404 for an unusable link. */
export async function confirmEmailChange(
  db: Executor,
  clock: Clock,
  token: string,
): Promise<{ email: string }> {
  const tokenHash = hashToken(token);
  return db.transaction().execute(async (trx) => {
    const now = clock.now().toISOString();
    const change = await findUsableEmailChange(trx, tokenHash, now);
    if (!change) throw new AppError('not_found', UNUSABLE_LINK);
    // Taken meanwhile (an invitation made that address a person): refused, the link stays usable.
    const holder = await findPersonByEmail(trx, change.new_email);
    if (holder && holder.id !== change.person_id) throw new AppError('member_exists', TAKEN);
    if (!(await useEmailChange(trx, tokenHash, now))) throw new AppError('not_found', UNUSABLE_LINK);
    await setPersonEmail(trx, change.person_id, change.new_email);
    return { email: change.new_email };
  });
}
