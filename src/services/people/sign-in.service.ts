/**
 * A sign-in as one use case (docs/dashboard.md, "Getting in"; issue 28): after a correct password
 * (or a used link) the person gets a session, or, with two factors, a challenge for the second
 * step (the password step logged, issue 26); after the second factor, the session. Opening the
 * session ends the one the browser held (a new id at every sign-in), spends its device token for a
 * new one and records `sign_in` in the account the session acts in, in one transaction: the log
 * never says a sign-in happened that did not, nor misses one that did. The route parses the
 * request and sets the cookies.
 */
import { inTransaction } from '../../store/executor.js';
import { recordAudit, type AuditOrigin } from '../accounts/audit.service.js';
import {
  authenticateSession,
  createSession,
  endSession,
  signIn,
  startingMembershipOf,
  type NewSession,
  type PersonSession,
  type SignInDeps,
} from './sessions.service.js';
import { recordPasswordStep, recordWrongSecondFactor, type SignInAlertDeps } from './sign-in-alerts.js';
import { rotateDeviceToken } from './sign-in-device.js';
import {
  completeChallenge,
  countRecoveryCodes,
  hasTwoFactor,
  issueChallenge,
  type SecondFactorKind,
} from './two-factor.service.js';

/** What the browser brings to a sign-in besides its credentials. */
export interface SignInRequest {
  origin: AuditOrigin;
  /** The session cookie it held, ended by the new session. */
  previousSecret: string | undefined;
  /** Its device cookie (sign-in-device.ts), spent for a new one. */
  device: string | undefined;
}

/** A completed sign-in: the session (its secret goes in the cookie) and the new device token. */
export interface OpenedSession {
  step: 'session';
  cookie: NewSession;
  /** Null when the person has no password (nothing to bind a device token to). */
  device: string | null;
  session: PersonSession;
}

/** A correct password of a person with two factors: the challenge of the second step. */
export interface SecondStep {
  step: 'second_factor';
  challenge: string;
  expiresAt: string;
}

export type SignInStep = OpenedSession | SecondStep;

type Deps = Pick<SignInDeps, 'db' | 'clock' | 'settings'>;

/**
 * The session that completes a sign-in, acting in `memberId`'s account (null: in none), with its
 * `sign_in` entry (after the second factor, for a person with two factors; a recovery code says so,
 * with what is left of them), in one transaction.
 */
export async function openSignedInSession(
  deps: Deps,
  request: SignInRequest,
  personId: string,
  memberId: string | null,
  /** The second factor that completed the sign-in (none: the password, or a link, alone). */
  secondFactor: SecondFactorKind | null = null,
): Promise<OpenedSession> {
  const { clock, settings } = deps;
  return inTransaction(deps.db, async (trx) => {
    await endSession(trx, request.previousSecret);
    const cookie = await createSession(trx, clock, settings, personId, memberId, request.origin);
    const device = await rotateDeviceToken(trx, clock, personId, request.device);
    const session = await authenticateSession(trx, clock, settings, cookie.secret);
    if (session.accountId !== null && session.memberId !== null)
      await recordAudit(trx, clock, {
        accountId: session.accountId,
        type: 'sign_in',
        actor: { kind: 'member', memberId: session.memberId, email: session.email },
        origin: request.origin,
        ...(secondFactor === null
          ? {}
          : {
              details:
                secondFactor === 'recovery_code'
                  ? {
                      second_factor: secondFactor,
                      recovery_codes_left: await countRecoveryCodes(trx, personId),
                    }
                  : { second_factor: secondFactor },
            }),
      });
    return { step: 'session', cookie, device, session };
  });
}

/**
 * After a correct password (or a used link): the session, or, for a person with two factors, the
 * challenge of the second step and no session until the code passes.
 */
export async function continueSignIn(
  deps: Deps,
  request: SignInRequest,
  personId: string,
  memberId: string | null,
  /** The person whose password passed at sign-in: the step is logged (issue 26). */
  passwordStepOf?: { id: string; email: string },
): Promise<SignInStep> {
  const { db, clock } = deps;
  if (!(await hasTwoFactor(db, personId))) return openSignedInSession(deps, request, personId, memberId);
  if (passwordStepOf !== undefined) await recordPasswordStep(db, clock, passwordStepOf, request.origin);
  const { challenge, expiresAt } = await issueChallenge(db, clock, personId);
  return { step: 'second_factor', challenge, expiresAt };
}

/** The sign-in page's first step: the address and password (sessions.service.ts `signIn`'s checks), then the session or the second step. */
export async function signInWithPassword(
  deps: SignInDeps,
  input: { email: string; password: string; altcha?: string; clientIp: string },
  request: SignInRequest,
): Promise<SignInStep> {
  const { person, memberId } = await signIn(deps, {
    ...input,
    userAgent: request.origin.userAgent,
    device: request.device,
  });
  return continueSignIn(deps, request, person.id, memberId, person);
}

/**
 * The second step: the challenge of the first and a TOTP or recovery code (a wrong one is logged,
 * counted and, past the threshold, e-mailed to the person: sign-in-alerts.ts); then the session,
 * in the account any sign-in starts in.
 */
export async function signInWithSecondFactor(
  deps: Deps & Pick<SignInAlertDeps, 'mailer' | 'logger'>,
  input: { challenge: string; code: string },
  request: SignInRequest,
): Promise<OpenedSession> {
  const { db, clock, settings } = deps;
  const alerts: SignInAlertDeps = { db, clock, mailer: deps.mailer, logger: deps.logger };
  const { personId, kind } = await completeChallenge(db, clock, {
    ...input,
    failureLimit: settings.signInFailureLimit,
    onWrongCode: (person, wrong) => recordWrongSecondFactor(alerts, person, wrong, request.origin),
  });
  return openSignedInSession(deps, request, personId, await startingMembershipOf(db, clock, personId), kind);
}
