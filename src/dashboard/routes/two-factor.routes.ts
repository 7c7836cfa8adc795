/**
 * A member's second factor (docs/dashboard.md, "Two-factor sign-in"): its state, turning TOTP on
 * (a secret and its QR code, then a first code with the password, which returns the recovery codes
 * once and e-mails the person), turning it
 * off (password and a code), and the owner's requirement for the whole account. The sign-in's
 * second step is in session.routes.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  confirmEnrolment,
  disableTwoFactor,
  setTwoFactorRequirement,
  startEnrolment,
  twoFactorStatus,
} from '../../services/people/two-factor.service.js';
import {
  DisableTwoFactorBody,
  RecoveryCodes,
  TwoFactorCodeBody,
  TwoFactorEnrolment,
  TwoFactorRequirementBody,
  TwoFactorStatus,
} from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requirePerson, requireSession } from '../security.js';
import { actsInAccount, type PersonSession } from '../../services/people/sessions.service.js';
import type { PersonChangeLog } from '../../services/accounts/audit.service.js';
import { byMember, originOf } from '../audit-origin.js';
import { noticeTwoFactorEnabled } from '../../services/people/sign-in-alerts.js';

/** Open to a member whose account requires two factors before they have them (security.ts). */
const ENROLMENT = { dashboardAccess: 'enrolment' } as const;

export function twoFactorRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  const failureLimit = deps.config.signInFailureLimit;
  /** A second factor is the person's; its change is logged in the account the session acts in. */
  const logOf = (request: FastifyRequest, session: PersonSession): PersonChangeLog =>
    actsInAccount(session) ? byMember(request, session) : null;

  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/account/two-factor',
      { config: ENROLMENT, schema: { response: { 200: TwoFactorStatus } } },
      async (request) => twoFactorStatus(db, requirePerson(request)),
    );

    app.post(
      '/account/two-factor/enrolment',
      { config: ENROLMENT, schema: { response: { 200: TwoFactorEnrolment } } },
      async (request) => {
        const session = requirePerson(request);
        return startEnrolment(db, clock, { personId: session.personId, email: session.email });
      },
    );

    app.post(
      '/account/two-factor/enrolment/confirm',
      { config: ENROLMENT, schema: { body: TwoFactorCodeBody, response: { 200: RecoveryCodes } } },
      async (request) => {
        const session = requirePerson(request);
        const codes = await confirmEnrolment(db, clock, {
          personId: session.personId,
          code: request.body.code,
          password: request.body.password,
          failureLimit,
          log: logOf(request, session),
        });
        // The person learns of it by e-mail too (with a relay): a session is not the person.
        noticeTwoFactorEnabled(
          { mailer: deps.mailer, logger: request.log },
          session.email,
          originOf(request),
          clock.now(),
        );
        return { recovery_codes: codes };
      },
    );

    app.post(
      '/account/two-factor/disable',
      { schema: { body: DisableTwoFactorBody } },
      async (request, reply) => {
        const session = requirePerson(request);
        await disableTwoFactor(db, clock, {
          personId: session.personId,
          accountId: session.accountId,
          operator: session.operator,
          password: request.body.password,
          code: request.body.code,
          failureLimit,
          log: logOf(request, session),
        });
        return reply.code(204).send();
      },
    );

    app.put(
      '/account/two-factor/requirement',
      { schema: { body: TwoFactorRequirementBody, response: { 200: TwoFactorStatus } } },
      async (request) => {
        const session = requireSession(request);
        await setTwoFactorRequirement(db, session, request.body.required);
        return twoFactorStatus(db, session);
      },
    );
  };
}
