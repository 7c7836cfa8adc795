/**
 * GET /v1/account/outcomes: how accurate the account's verdicts were, measured with its own
 * delivery outcomes (docs/outcomes.md, "How accurate are we?"). A test key gets the report's shape
 * with every count 0: test keys never read account data.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { accuracyReport, emptyReport, reportPeriod } from '../../services/outcomes/report.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import {
  accountOutcomesQuerySchema,
  accountOutcomesSchema,
  AUTH_ERRORS,
  errorResponses,
} from '../schemas.js';

export function accountOutcomesRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/account/outcomes',
      {
        config: { scope: 'outcomes:read' },
        schema: {
          operationId: 'getOutcomesReport',
          summary: 'How accurate the verdicts were',
          description:
            'For the addresses the account verified in the period (default: the last 90 days) and later sent to, what became of them, per status, reason, provider and score band, with the counts behind each figure and the reliability diagram per score decile. See docs/outcomes.md, "How accurate are we?". A test key gets the same shape with every count 0.',
          tags: ['outcomes'],
          querystring: accountOutcomesQuerySchema,
          response: {
            200: accountOutcomesSchema,
            ...errorResponses([...AUTH_ERRORS, 'invalid_request']),
          },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const period = reportPeriod(deps.clock, request.query);
        const report =
          auth.kind === 'test'
            ? emptyReport(period)
            : await accuracyReport(deps, { accountId: auth.accountId, ...period });
        return { ...report, request_id: request.id };
      },
    );
  };
}
