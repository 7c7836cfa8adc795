/**
 * The operator console's API (docs/operators.md): every account, changing and creating one, the
 * service's health, and the accuracy report of every account's verdicts in aggregate. Operators only: every route's onRequest hook asks requireOperator (after
 * the session guard, before the body is read), which answers 404 to everyone else.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  changeOperatorAccount,
  createOperatorAccount,
  listOperatorAccounts,
  type OperatorActor,
} from '../../services/operators/operator-accounts.service.js';
import { PLAN_SLUGS } from '../../services/usage/plans.js';
import { serviceHealth } from '../../services/operators/service-health.service.js';
import { accuracyReport, reportPeriod } from '../../services/outcomes/report.service.js';
import {
  AccuracyQuery,
  AccuracyReport,
  CreatedOperatorAccount,
  CreateOperatorAccountBody,
  IdParams,
  OperatorAccount,
  OperatorAccountList,
  OperatorAccountPatch,
  ServiceHealth,
} from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireOperator } from '../security.js';

export function operatorRoutes(deps: DashboardDeps) {
  const { db, clock, plans, logger } = deps;
  const actor = (request: FastifyRequest): OperatorActor => {
    const session = requireOperator(request);
    return { id: session.personId, email: session.email };
  };
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // Before the body is read and validated: a member's malformed request answers 404 as a
    // well-formed one does, never a 422 that would show the route exists (issue 26).
    app.addHook('onRequest', async (request) => {
      requireOperator(request);
    });

    app.get('/operator/accounts', { schema: { response: { 200: OperatorAccountList } } }, async () => ({
      accounts: await listOperatorAccounts({ db, clock, plans }),
      plans: [...PLAN_SLUGS],
    }));

    app.patch(
      '/operator/accounts/:id',
      { schema: { params: IdParams, body: OperatorAccountPatch, response: { 200: OperatorAccount } } },
      async (request) => {
        const { plan, quota_limit, rate_limit, overage_enabled, suspended, reason } = request.body;
        return changeOperatorAccount({ db, clock, plans, logger }, actor(request), request.params.id, {
          ...(plan === undefined ? {} : { plan }),
          ...(quota_limit === undefined ? {} : { quotaLimit: quota_limit }),
          ...(rate_limit === undefined ? {} : { rateLimit: rate_limit }),
          ...(overage_enabled === undefined ? {} : { overageEnabled: overage_enabled }),
          ...(suspended === undefined ? {} : { suspended }),
          ...(reason === undefined ? {} : { reason }),
        });
      },
    );

    app.post(
      '/operator/accounts',
      { schema: { body: CreateOperatorAccountBody, response: { 201: CreatedOperatorAccount } } },
      async (request, reply) => {
        const { email, plan, quota_limit, rate_limit } = request.body;
        const created = await createOperatorAccount(
          { db, clock, plans, logger, config: deps.config, mailer: deps.mailer },
          actor(request),
          {
            email,
            ...(plan === undefined ? {} : { plan }),
            quotaLimit: quota_limit ?? null,
            rateLimit: rate_limit ?? null,
          },
        );
        return reply.code(201).send({
          account: created.account,
          owner_invitation: {
            link: created.owner.link,
            expires_at: created.owner.expiresAt,
            emailed: created.owner.emailed,
          },
        });
      },
    );

    // The accuracy report over every account, in aggregate only (docs/operators.md): no account's
    // addresses, no per-account figure.
    app.get(
      '/operator/outcomes/report',
      { schema: { querystring: AccuracyQuery, response: { 200: AccuracyReport } } },
      async (request) =>
        accuracyReport(deps, { accountId: null, ...reportPeriod(deps.clock, request.query) }),
    );

    app.get('/operator/health', { schema: { response: { 200: ServiceHealth } } }, async () =>
      serviceHealth({
        db,
        clock,
        leaseMs: deps.config.batch.leaseMs,
        dnsTrust: () => deps.dnsTrust.status(),
        ...(deps.operatorConsole?.egressStatuses === undefined
          ? {}
          : { egressStatuses: deps.operatorConsole.egressStatuses }),
      }),
    );
  };
}
