/**
 * Signing in and out, switching accounts, invitations, password resets and password changes
 * (docs/dashboard.md, "Getting in" and "People and accounts"). Every route here but GET /session,
 * POST /session/account, POST /invitations/join, GET /session/operator and POST /account/password
 * works without a session.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import {
  acceptLink,
  changePassword,
  describeInvitation,
  joinWithInvitation,
  requestPasswordReset,
} from '../../services/people/members.service.js';
import {
  authenticateSession,
  createSession,
  csrfTokenMatches,
  endSession,
  listMemberships,
  signIn,
  startingMembership,
  startingMembershipOf,
  switchAccount,
  type DashboardSession,
  type PersonSession,
} from '../../services/people/sessions.service.js';
import {
  completeChallenge,
  countRecoveryCodes,
  hasTwoFactor,
  issueChallenge,
  type SecondFactorKind,
} from '../../services/people/two-factor.service.js';
import { recordPasswordStep, recordWrongSecondFactor } from '../../services/people/sign-in-alerts.js';
import { createSignInChallenge } from '../../services/people/sign-in-challenge.js';
import { rotateDeviceToken } from '../../services/people/sign-in-device.js';
import { recordAudit, recordPersonAudit } from '../../services/accounts/audit.service.js';
import { confirmEmailChange, requestEmailChange } from '../../services/people/email-change.service.js';
import type { Executor } from '../../store/executor.js';
import { byMember, originOf } from '../audit-origin.js';
import type { MemberTokenKind } from '../../store/schema/dashboard.schema.js';
import {
  ChangeEmailBody,
  ChangePasswordBody,
  ConfirmEmailBody,
  ConfirmEmailResult,
  EmailChangeResult,
  CSRF_HEADER,
  ForgotPasswordBody,
  InvitationPreview,
  OperatorWhoami,
  SecondFactorBody,
  SecondFactorChallenge,
  ServiceStatus,
  SessionView,
  SetPasswordBody,
  SignInBody,
  SignInChallenge,
  SwitchAccountBody,
  TokenBody,
} from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import {
  clearSessionCookie,
  deviceCookieName,
  requireOperator,
  requirePerson,
  setDeviceCookie,
  setSessionCookie,
  type GuardDeps,
} from '../security.js';
import { clientKey } from '../../services/usage/rate-limit.js';
import { dnsResolverHealth } from '../../services/operators/service-health.service.js';

const PUBLIC = { dashboardAccess: 'public' } as const;
const ENROLMENT = { dashboardAccess: 'enrolment' } as const;

export async function toSessionView(db: Executor, session: PersonSession): Promise<SessionView> {
  const memberships = await listMemberships(db, session.personId);
  return {
    person: { id: session.personId, email: session.email, operator: session.operator },
    member:
      session.memberId === null || session.role === null || session.memberCreatedAt === null
        ? null
        : {
            id: session.memberId,
            email: session.email,
            role: session.role,
            created_at: session.memberCreatedAt,
            joined_at: session.joinedAt,
          },
    account:
      session.accountId === null
        ? null
        : {
            id: session.accountId,
            plan: session.accountPlan ?? '',
            notification_email: session.accountEmail ?? '',
          },
    memberships: memberships.map((m) => ({
      account_id: m.account_id,
      member_id: m.member_id,
      plan: m.account_plan,
      notification_email: m.account_email,
      role: m.role,
      current: m.member_id === session.memberId,
    })),
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt,
    two_factor: { enabled: session.twoFactorEnabled, required: session.twoFactorRequired },
  };
}

/**
 * Takes one attempt from the client address's allowance (the API's rate limiter: in process, or
 * in Redis shared by every process); 429 `rate_limit_exceeded` past it.
 */
async function limitClient(deps: DashboardDeps, what: string, request: FastifyRequest): Promise<void> {
  const limit = deps.config.signInRateLimit;
  if (limit === 0) return;
  const decision = await deps.rateLimiter.consume(`dashboard-${what}:${clientKey(request.ip)}`, limit);
  if (!decision.allowed)
    throw new AppError(
      'rate_limit_exceeded',
      `too many attempts from this address; retry in ${decision.resetSeconds} s`,
      {
        retryAfterSeconds: decision.resetSeconds,
      },
    );
}

export function sessionRoutes(deps: DashboardDeps, guard: GuardDeps) {
  const { db, clock } = deps;
  const settings = deps.config;

  /**
   * A new session for the person, in place of any the browser held (a new id at every sign-in),
   * acting in `memberId`'s account. The sign-in is complete here, so it is recorded here (after
   * the second factor, for a person with two factors; issue 16), in that account's log, and the
   * browser gets a new device cookie of the person's (services/people/sign-in-device.ts).
   */
  async function openSession(
    request: FastifyRequest,
    reply: FastifyReply,
    personId: string,
    memberId: string | null,
    /** The second factor that completed the sign-in (none: the password, or a link, alone). */
    secondFactor: SecondFactorKind | null = null,
  ): Promise<SessionView> {
    await endSession(db, request.cookies[guard.cookie.name]);
    const session = await createSession(db, clock, settings, personId, memberId, originOf(request));
    setSessionCookie(reply, guard, session, clock.now());
    // A new device token at each sign-in; the one the browser held is spent (issue 26).
    const device = await rotateDeviceToken(db, clock, personId, request.cookies[deviceCookieName(guard)]);
    if (device !== null) setDeviceCookie(reply, guard, device);
    const opened = await authenticateSession(db, clock, settings, session.secret);
    if (opened.accountId !== null && opened.memberId !== null)
      await recordAudit(db, clock, {
        accountId: opened.accountId,
        type: 'sign_in',
        actor: { kind: 'member', memberId: opened.memberId, email: opened.email },
        origin: originOf(request),
        // A recovery code says so, with what is left of them (issue 26).
        ...(secondFactor === null
          ? {}
          : {
              details:
                secondFactor === 'recovery_code'
                  ? {
                      second_factor: secondFactor,
                      recovery_codes_left: await countRecoveryCodes(db, personId),
                    }
                  : { second_factor: secondFactor },
            }),
      });
    return toSessionView(db, opened);
  }

  /**
   * After a correct password (or a used link): a session, or, for a person with two factors, 202
   * and a challenge for the second step; no session until the code passes (docs/dashboard.md).
   */
  async function signInOrChallenge(
    request: FastifyRequest,
    reply: FastifyReply,
    personId: string,
    memberId: string | null,
    /** The person whose password passed at sign-in: the step is logged (issue 26). */
    passwordStepOf?: { id: string; email: string },
  ): Promise<SessionView | FastifyReply> {
    if (!(await hasTwoFactor(db, personId))) return openSession(request, reply, personId, memberId);
    if (passwordStepOf !== undefined) await recordPasswordStep(db, clock, passwordStepOf, originOf(request));
    const { challenge, expiresAt } = await issueChallenge(db, clock, personId);
    const body: SecondFactorChallenge = { second_factor_required: true, challenge, expires_at: expiresAt };
    return reply.code(202).send(body);
  }

  async function accept(
    request: FastifyRequest,
    reply: FastifyReply,
    body: SetPasswordBody,
    kind: MemberTokenKind,
  ): Promise<SessionView | FastifyReply> {
    // Unauthenticated and about to hash a password: limited per client address like sign-in.
    await limitClient(deps, 'accept-link', request);
    const { person, member } = await acceptLink(db, clock, {
      token: body.token,
      password: body.password,
      kind,
    });
    const origin = originOf(request);
    if (member !== null)
      await recordAudit(db, clock, {
        accountId: member.account_id,
        type: 'invitation_accepted',
        actor: { kind: 'member', memberId: member.id, email: person.email },
        origin,
      });
    else await recordPersonAudit(db, clock, person, { type: 'password_reset', origin });
    // The invitation's account first; after a reset, where any sign-in starts.
    return signInOrChallenge(
      request,
      reply,
      person.id,
      member?.id ?? (await startingMembership(db, clock, person)),
    );
  }

  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/session', { config: ENROLMENT, schema: { response: { 200: SessionView } } }, async (request) =>
      toSessionView(db, requirePerson(request)),
    );

    // What every signed-in person is told of the server (the shell's banner): whether its DNS
    // resolver is trusted, so that nobody takes "unknown" answers for a verdict about their list.
    app.get('/service-status', { config: ENROLMENT, schema: { response: { 200: ServiceStatus } } }, () => ({
      dns_resolver: dnsResolverHealth(deps.dnsTrust.status()),
    }));

    // The account switcher: from the next request on, every route is confined to that account.
    // Open during enrolment too: a person whose current account requires two factors may still
    // move to one of their accounts that does not.
    app.post(
      '/session/account',
      { config: ENROLMENT, schema: { body: SwitchAccountBody, response: { 200: SessionView } } },
      async (request) => {
        const session = requirePerson(request);
        await switchAccount(db, session, request.body.account_id);
        return toSessionView(
          db,
          await authenticateSession(db, clock, settings, request.cookies[guard.cookie.name]),
        );
      },
    );

    // A minimal operator route (the console builds on requireOperator): 404 for anyone else.
    app.get('/session/operator', { schema: { response: { 200: OperatorWhoami } } }, async (request) => {
      const session = requireOperator(request);
      return { person_id: session.personId, email: session.email };
    });

    app.post(
      '/session',
      {
        config: PUBLIC,
        schema: { body: SignInBody, response: { 200: SessionView, 202: SecondFactorChallenge } },
      },
      async (request, reply) => {
        await limitClient(deps, 'sign-in', request);
        const origin = originOf(request);
        const { person, memberId } = await signIn(
          { db, clock, settings },
          {
            ...request.body,
            clientIp: request.ip,
            userAgent: origin.userAgent,
            device: request.cookies[deviceCookieName(guard)],
          },
        );
        return signInOrChallenge(request, reply, person.id, memberId, person);
      },
    );

    // The proof of work that sign-in asks for after repeated failures (428 `challenge_required`);
    // the page's widget fetches one for each attempt. Making one costs ten SHA-256 and an HMAC,
    // and tells nothing: not limited.
    app.get(
      '/session/challenge',
      { config: PUBLIC, schema: { response: { 200: SignInChallenge } } },
      async (_request, reply): Promise<SignInChallenge> => {
        void reply.header('cache-control', 'no-store');
        const { parameters, signature } = await createSignInChallenge(db, clock);
        return { parameters: Object.fromEntries(Object.entries(parameters)), signature: signature ?? '' };
      },
    );

    // The second step: the challenge of the first and a TOTP or recovery code. Limited per client
    // address like sign-in, and wrong codes per member (services/people/two-factor.service.ts).
    app.post(
      '/session/second-factor',
      { config: PUBLIC, schema: { body: SecondFactorBody, response: { 200: SessionView } } },
      async (request, reply) => {
        await limitClient(deps, 'second-factor', request);
        const origin = originOf(request);
        const alerts = { db, clock, mailer: deps.mailer, logger: request.log };
        const { personId, kind } = await completeChallenge(db, clock, {
          challenge: request.body.challenge,
          code: request.body.code,
          failureLimit: settings.signInFailureLimit,
          onWrongCode: (person, wrong) => recordWrongSecondFactor(alerts, person, wrong, origin),
        });
        return openSession(request, reply, personId, await startingMembershipOf(db, clock, personId), kind);
      },
    );

    // Public, so that a browser whose session already ended can still clear its cookie; a live
    // session is ended only with its CSRF token.
    app.delete('/session', { config: PUBLIC }, async (request, reply) => {
      const secret = request.cookies[guard.cookie.name];
      const live = await authenticateSession(db, clock, settings, secret).catch(() => null);
      const token = request.headers[CSRF_HEADER];
      if (live !== null && !csrfTokenMatches(secret!, typeof token === 'string' ? token : undefined))
        throw new AppError('csrf_rejected', `send the session's CSRF token in ${CSRF_HEADER} to sign out`);
      await endSession(db, secret);
      clearSessionCookie(reply, guard);
      return reply.code(204).send();
    });

    // The token travels in the body, never in a path a proxy's access log keeps (issue 16).
    app.post(
      '/invitations/preview',
      { config: PUBLIC, schema: { body: TokenBody, response: { 200: InvitationPreview } } },
      async (request) => {
        await limitClient(deps, 'accept-link', request);
        return describeInvitation(db, clock, request.body.token);
      },
    );

    app.post(
      '/invitations/accept',
      {
        config: PUBLIC,
        schema: { body: SetPasswordBody, response: { 200: SessionView, 202: SecondFactorChallenge } },
      },
      async (request, reply) => accept(request, reply, request.body, 'invitation'),
    );

    // Accepting as the signed-in person (who has a password already): the membership joins and
    // the session moves to that account. 404 for a link of another person's, as for any
    // unusable link.
    app.post(
      '/invitations/join',
      { config: ENROLMENT, schema: { body: TokenBody, response: { 200: SessionView } } },
      async (request) => {
        await limitClient(deps, 'accept-link', request);
        const session = requirePerson(request);
        const member = await joinWithInvitation(db, clock, {
          token: request.body.token,
          personId: session.personId,
        });
        await recordAudit(db, clock, {
          accountId: member.account_id,
          type: 'invitation_accepted',
          actor: { kind: 'member', memberId: member.id, email: session.email },
          origin: originOf(request),
        });
        await switchAccount(db, session, member.account_id);
        return toSessionView(
          db,
          await authenticateSession(db, clock, settings, request.cookies[guard.cookie.name]),
        );
      },
    );

    app.post(
      '/password-resets',
      { config: PUBLIC, schema: { body: ForgotPasswordBody } },
      async (request, reply) => {
        await limitClient(deps, 'password-reset', request);
        const { email } = request.body;
        // Answered at once and the same whoever asks: whether the address is a member's, and how
        // long the relay takes, stay unknown to the asker. Without a relay nothing is issued.
        if (deps.mailer !== null)
          void requestPasswordReset(
            { db, clock, config: deps.config, mailer: deps.mailer, logger: request.log },
            email,
          ).catch((err: unknown) => request.log.warn({ err }, 'password reset request failed'));
        return reply.code(202).send();
      },
    );

    app.post(
      '/password-resets/accept',
      {
        config: PUBLIC,
        schema: { body: SetPasswordBody, response: { 200: SessionView, 202: SecondFactorChallenge } },
      },
      async (request, reply) => accept(request, reply, request.body, 'password_reset'),
    );

    app.post('/account/password', { schema: { body: ChangePasswordBody } }, async (request, reply) => {
      const session = requirePerson(request);
      const body = request.body;
      await changePassword(db, clock, {
        personId: session.personId,
        current: body.current_password,
        next: body.new_password,
        keepSessionId: session.sessionId,
        failureLimit: settings.signInFailureLimit,
      });
      if (session.accountId !== null && session.memberId !== null)
        await recordAudit(db, clock, {
          ...byMember(request, session as DashboardSession),
          type: 'password_changed',
        });
      return reply.code(204).send();
    });

    app.post(
      '/account/email',
      { schema: { body: ChangeEmailBody, response: { 200: EmailChangeResult } } },
      async (request) => {
        const session = requirePerson(request);
        return requestEmailChange(
          { db, clock, config: deps.config, mailer: deps.mailer, logger: request.log },
          {
            personId: session.personId,
            password: request.body.password,
            newEmail: request.body.email,
            failureLimit: settings.signInFailureLimit,
          },
        );
      },
    );

    app.post(
      '/email-changes/accept',
      { config: PUBLIC, schema: { body: ConfirmEmailBody, response: { 200: ConfirmEmailResult } } },
      async (request) => confirmEmailChange(db, clock, request.body.token),
    );
  };
}
