/**
 * What the security log and the person learn of a sign-in between its two steps (issue 26: a
 * stolen password left no trace while its holder guessed codes). A correct password of a person
 * with two factors is logged as `sign_in_password_ok`, each wrong second factor after it as
 * `sign_in_second_factor_failed`, in the log of every account the person has joined; and after
 * `SECOND_FACTOR_ALERT_AFTER` wrong codes in one failure window the person is e-mailed (when a
 * relay is configured), at most once a day. Turning two factors on is e-mailed too.
 */
import { DAY, type Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import { findPersonById } from '../../store/person.store.js';
import { recordPersonAudit, type AuditOrigin } from '../accounts/audit.service.js';
import { countAttempts, failureKey, recordAttempt, spendOnce } from './failure-budget.js';
import type { MemberMailer } from './member-mail.js';
import type { SecondFactorKind } from './two-factor.service.js';

/**
 * Wrong second factors in one 15-minute window after which the person is e-mailed. Three: one
 * mistyped code, or two, is a person; three is worth their attention (the e-mail says to ignore
 * it if it was them).
 */
export const SECOND_FACTOR_ALERT_AFTER = 3;

export interface SignInAlertDeps {
  db: Executor;
  clock: Clock;
  /** Null: no relay, nothing is e-mailed. */
  mailer: Pick<MemberMailer, 'sendNotice'> | null;
  logger: { warn(obj: object, msg: string): void };
}

/** The password step that passed, for a person whose sign-in now waits for the second factor. */
export async function recordPasswordStep(
  db: Executor,
  clock: Clock,
  person: { id: string; email: string },
  origin: AuditOrigin,
): Promise<void> {
  await recordPersonAudit(db, clock, person, { type: 'sign_in_password_ok', origin });
}

/**
 * A wrong second factor after a correct password: logged, counted, and past the threshold
 * e-mailed to the person (not awaited: the relay's time is not the answer's).
 */
export async function recordWrongSecondFactor(
  deps: SignInAlertDeps,
  personId: string,
  kind: SecondFactorKind,
  origin: AuditOrigin,
): Promise<void> {
  const { db, clock } = deps;
  const person = await findPersonById(db, personId);
  if (!person) return;
  await recordPersonAudit(db, clock, person, {
    type: 'sign_in_second_factor_failed',
    origin,
    details: { second_factor: kind },
  });
  if (deps.mailer === null) return;
  const now = clock.now();
  const key = failureKey(`second-factor-wrong:${personId}`);
  await recordAttempt(db, key, now);
  const failures = await countAttempts(db, key, now);
  if (failures < SECOND_FACTOR_ALERT_AFTER) return;
  // Once a day: the mark is kept in the attempt counters until the day ends, then swept.
  const day = Math.floor(now.getTime() / DAY);
  if (!(await spendOnce(db, failureKey(`second-factor-alert:${personId}:${day}`), new Date((day + 1) * DAY))))
    return;
  void deps.mailer
    .sendNotice(person.email, {
      kind: 'second_factor_failures',
      failures,
      clientIp: origin.clientIp,
      at: now.toISOString(),
    })
    .catch((err: unknown) => deps.logger.warn({ err }, 'the wrong-second-factor notice was not sent'));
}

/**
 * Tells the person that two-factor sign-in was turned on (with a relay; not awaited). A stolen
 * session that got past the password would otherwise lock them out unseen (issue 26).
 */
export function noticeTwoFactorEnabled(
  deps: Pick<SignInAlertDeps, 'mailer' | 'logger'>,
  email: string,
  origin: AuditOrigin,
  at: Date,
): void {
  if (deps.mailer === null) return;
  void deps.mailer
    .sendNotice(email, { kind: 'two_factor_enabled', clientIp: origin.clientIp, at: at.toISOString() })
    .catch((err: unknown) => deps.logger.warn({ err }, 'the two-factor notice was not sent'));
}
