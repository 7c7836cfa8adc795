/**
 * Signing in and out, invitations, password resets and password changes
 * (docs/dashboard.md, "Getting in"). Every route here but GET /session and
 * POST /account/password works without a session.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import {
  acceptLink,
  changePassword,
  describeInvitation,
  requestPasswordReset,
} from '../../services/members.service.js';
import {
  authenticateSession,
  createSession,
  csrfTokenMatches,
  endSession,
  signIn,
  type DashboardSession,
} from '../../services/sessions.service.js';
import { completeChallenge, hasTwoFactor, issueChallenge } from '../../services/two-factor.service.js';
import { recordAudit } from '../../services/audit.service.js';
import { byMember, originOf } from '../audit-origin.js';
import type { MemberTokenKind } from '../../store/schema/dashboard.schema.js';
import {
  ChangePasswordBody,
  CSRF_HEADER,
  ForgotPasswordBody,
  InvitationPreview,
  SecondFactorBody,
  SecondFactorChallenge,
  SessionView,
  SetPasswordBody,
  SignInBody,
  TokenBody,
} from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { clearSessionCookie, requireSession, setSessionCookie, type GuardDeps } from '../security.js';

const PUBLIC = { dashboardAccess: 'public' } as const;
const ENROLMENT = { dashboardAccess: 'enrolment' } as const;

export function toSessionView(session: DashboardSession): SessionView {
  return {
    member: {
      id: session.memberId,
      email: session.email,
      role: session.role,
      created_at: session.memberCreatedAt,
      joined_at: session.joinedAt,
    },
    account: {
      id: session.accountId,
      plan: session.accountPlan,
      notification_email: session.accountEmail,
    },
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
  const decision = await deps.rateLimiter.consume(`dashboard-${what}:${request.ip}`, limit);
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

  /** A new session for the member, in place of any the browser held (a new id at every sign-in). */
  async function openSession(
    request: FastifyRequest,
    reply: FastifyReply,
    memberId: string,
  ): Promise<SessionView> {
    await endSession(db, request.cookies[guard.cookie.name]);
    const session = await createSession(db, clock, settings, memberId, originOf(request));
    setSessionCookie(reply, guard, session, clock.now());
    return toSessionView(await authenticateSession(db, clock, settings, session.secret));
  }

  /**
   * After a correct password (or a used link): a session, or, for a member with two factors, 202
   * and a challenge for the second step; no session until the code passes (docs/dashboard.md).
   */
  async function signInOrChallenge(
    request: FastifyRequest,
    reply: FastifyReply,
    memberId: string,
  ): Promise<SessionView | FastifyReply> {
    if (!(await hasTwoFactor(db, memberId))) return openSession(request, reply, memberId);
    const { challenge, expiresAt } = await issueChallenge(db, clock, memberId);
    const body: SecondFactorChallenge = { second_factor_required: true, challenge, expires_at: expiresAt };
    return reply.code(202).send(body);
  }

  async function accept(
    request: FastifyRequest,
    reply: FastifyReply,
    body: SetPasswordBody,
    kind: MemberTokenKind,
  ): Promise<SessionView> {
    // Unauthenticated and about to hash a password: limited per client address like sign-in.
    await limitClient(deps, 'accept-link', request);
    const member = await acceptLink(db, clock, { token: body.token, password: body.password, kind });
    await recordAudit(db, clock, {
      accountId: member.account_id,
      type: kind === 'invitation' ? 'invitation_accepted' : 'password_reset',
      actor: { kind: 'member', memberId: member.id, email: member.email },
      origin: originOf(request),
    });
    return signInOrChallenge(request, reply, member.id);
  }

  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/session', { config: ENROLMENT, schema: { response: { 200: SessionView } } }, async (request) =>
      toSessionView(requireSession(request)),
    );

    app.post(
      '/session',
      {
        config: PUBLIC,
        schema: { body: SignInBody, response: { 200: SessionView, 202: SecondFactorChallenge } },
      },
      async (request, reply) => {
        await limitClient(deps, 'sign-in', request);
        const origin = originOf(request);
        const { member } = await signIn(
          { db, clock, settings },
          { ...request.body, clientIp: request.ip, userAgent: origin.userAgent },
        );
        return signInOrChallenge(request, reply, member.id);
      },
    );

    // The second step: the challenge of the first and a TOTP or recovery code. Limited per client
    // address like sign-in, and wrong codes per member (services/two-factor.service.ts).
    app.post(
      '/session/second-factor',
      { config: PUBLIC, schema: { body: SecondFactorBody, response: { 200: SessionView } } },
      async (request, reply) => {
        await limitClient(deps, 'second-factor', request);
        const memberId = await completeChallenge(db, clock, {
          challenge: request.body.challenge,
          code: request.body.code,
          failureLimit: settings.signInFailureLimit,
        });
        return openSession(request, reply, memberId);
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
      const session = requireSession(request);
      const body = request.body;
      await changePassword(db, clock, {
        memberId: session.memberId,
        current: body.current_password,
        next: body.new_password,
        keepSessionId: session.sessionId,
        failureLimit: settings.signInFailureLimit,
      });
      await recordAudit(db, clock, { ...byMember(request, session), type: 'password_changed' });
      return reply.code(204).send();
    });
  };
}
