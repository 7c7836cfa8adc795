/**
 * The account pages' endpoints (docs/dashboard.md): the overview and its daily usage as CSV, a live verification, the
 * members, the settings.
 */
import { refuseIfSuspended } from '../../services/accounts/accounts.service.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_TIMEOUT_MS } from '../../engine/types.js';
import { dailyUsageCsv, getOverview } from '../../services/usage/usage-history.service.js';
import {
  getSettings,
  revealWebhookSecret,
  rotateWebhookSecret,
  setNotificationEmail,
} from '../../services/accounts/account-settings.service.js';
import { inviteFromDashboard, listMembers, removeMember } from '../../services/people/members.service.js';
import { verifyOne } from '../../services/verify/verify.service.js';
import {
  IdParams,
  Invitation,
  InviteBody,
  MemberList,
  Overview,
  Settings,
  SettingsBody,
  VerifyBody,
  WebhookSecret,
} from '../contract.js';
import { byMember, originOf } from '../audit-origin.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

export function accountRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  const relayConfigured = deps.config.smtpRelayUrl !== null;
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/overview', { schema: { response: { 200: Overview } } }, async (request) =>
      getOverview(deps, requireSession(request).accountId),
    );
    app.get('/overview/daily.csv', async (request, reply) => {
      const csv = await dailyUsageCsv(deps, requireSession(request).accountId);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="daily-usage.csv"')
        .header('cache-control', 'no-store')
        .send(csv);
    });

    // One live verification, counted against the quota as POST /v1/verify with a live key is,
    // answered with the same object (every check included).
    app.post('/verify', { schema: { body: VerifyBody } }, async (request) => {
      await refuseIfSuspended(db, requireSession(request).accountId);
      const { result, cached, checkedAt, transcript } = await verifyOne(deps, {
        accountId: requireSession(request).accountId,
        kind: 'live',
        email: request.body.email,
        timeoutMs: DEFAULT_TIMEOUT_MS,
        transcript: request.body.include_transcript === true,
      });
      deps.metrics.verdicts.inc({ status: result.status, kind: 'live' });
      return {
        ...result,
        ...(transcript === undefined ? {} : { transcript }),
        cached,
        checked_at: checkedAt.toISOString(),
        request_id: request.id,
      };
    });

    app.get('/members', { schema: { response: { 200: MemberList } } }, async (request) => ({
      members: await listMembers(db, requireSession(request).accountId),
    }));

    app.post(
      '/members',
      { schema: { body: InviteBody, response: { 201: Invitation } } },
      async (request, reply) => {
        const session = requireSession(request);
        const sent = await inviteFromDashboard(
          { db, clock, config: deps.config, mailer: deps.mailer, logger: request.log },
          {
            accountId: session.accountId,
            email: request.body.email,
            inviter: {
              memberId: session.memberId,
              role: session.role,
              email: session.email,
              origin: originOf(request),
            },
          },
        );
        return reply
          .code(201)
          .send({ member: sent.member, link: sent.link, expires_at: sent.expiresAt, emailed: sent.emailed });
      },
    );

    app.delete('/members/:id', { schema: { params: IdParams } }, async (request, reply) => {
      const session = requireSession(request);
      await removeMember(
        db,
        clock,
        { accountId: session.accountId, memberId: request.params.id },
        byMember(request, session),
      );
      return reply.code(204).send();
    });

    app.get('/settings', { schema: { response: { 200: Settings } } }, async (request) =>
      getSettings(db, requireSession(request).accountId, relayConfigured),
    );

    app.put('/settings', { schema: { body: SettingsBody, response: { 200: Settings } } }, async (request) => {
      const { accountId } = requireSession(request);
      await setNotificationEmail(db, clock, accountId, request.body.notification_email);
      return getSettings(db, accountId, relayConfigured);
    });

    app.post(
      '/settings/webhook-secret/reveal',
      { schema: { response: { 200: WebhookSecret } } },
      async (request) => {
        const session = requireSession(request);
        return {
          webhook_secret: await revealWebhookSecret(db, clock, session.accountId, byMember(request, session)),
        };
      },
    );

    app.post(
      '/settings/webhook-secret/rotate',
      { schema: { response: { 200: WebhookSecret } } },
      async (request) => {
        const session = requireSession(request);
        return {
          webhook_secret: await rotateWebhookSecret(db, clock, session.accountId, byMember(request, session)),
        };
      },
    );
  };
}
