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
  actsInAccount,
  authenticateSession,
  csrfTokenMatches,
  endSession,
  listMemberships,
  startingMembership,
  switchAccount,
  type PersonSession,
} from '../../services/people/sessions.service.js';
import { createSignInChallenge } from '../../services/people/sign-in-challenge.js';
import { confirmEmailChange, requestEmailChange } from '../../services/people/email-change.service.js';
import type { Executor } from '../../store/executor.js';
import {
  continueSignIn,
  signInWithPassword,
  signInWithSecondFactor,
  type SignInRequest,
  type SignInStep,
} from '../../services/people/sign-in.service.js';
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
  const sessionDeps = { db, clock, settings };

  /** What the browser brings to a sign-in besides its credentials. */
  const signInRequest = (request: FastifyRequest): SignInRequest => ({
    origin: originOf(request),
    previousSecret: request.cookies[guard.cookie.name],
    device: request.cookies[deviceCookieName(guard)],
  });

  /** A sign-in's answer: the session with its cookies, or 202 and the second step's challenge. */
  async function answerSignIn(step: SignInStep, reply: FastifyReply): Promise<SessionView | FastifyReply> {
    if (step.step === 'second_factor') {
      const body: SecondFactorChallenge = {
        second_factor_required: true,
        challenge: step.challenge,
        expires_at: step.expiresAt,
      };
      return reply.code(202).send(body);
    }
    setSessionCookie(reply, guard, step.cookie, clock.now());
    if (step.device !== null) setDeviceCookie(reply, guard, step.device);
    return toSessionView(db, step.session);
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
      origin: originOf(request),
    });
    // The invitation's account first; after a reset, where any sign-in starts.
    const memberId = member?.id ?? (await startingMembership(db, clock, person));
    return answerSignIn(
      await continueSignIn(sessionDeps, signInRequest(request), person.id, memberId),
      reply,
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
        const step = await signInWithPassword(
          sessionDeps,
          { ...request.body, clientIp: request.ip },
          signInRequest(request),
        );
        return answerSignIn(step, reply);
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
        const opened = await signInWithSecondFactor(
          { ...sessionDeps, mailer: deps.mailer, logger: request.log },
          request.body,
          signInRequest(request),
        );
        return answerSignIn(opened, reply);
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
        log: actsInAccount(session) ? byMember(request, session) : null,
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
