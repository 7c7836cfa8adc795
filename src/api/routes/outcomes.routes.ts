/**
 * POST /v1/outcomes (delivery outcomes in) and DELETE /v1/outcomes?email= (an address's history
 * erased); docs/outcomes.md. A test key's events are checked and answered like a live key's, and
 * stored nowhere.
 */
import type { FastifyPluginAsync } from 'fastify';
import {
  eraseOutcomes,
  MAX_EVENTS_PER_REQUEST,
  OUTCOMES_FILE_LIMIT,
  takeOutcomes,
  type OutcomeEventInput,
} from '../../services/outcomes/intake.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import {
  AUTH_ERRORS,
  BODY_ERRORS,
  errorResponses,
  outcomesBodySchema,
  outcomesEraseQuerySchema,
  outcomesEraseSchema,
  outcomesReportSchema,
} from '../schemas.js';

/** 10,000 events of the longest fields fit; a larger body is refused before it is parsed. */
export const OUTCOMES_BODY_LIMIT = OUTCOMES_FILE_LIMIT;

export function outcomesRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (app) => {
    app.post(
      '/v1/outcomes',
      {
        bodyLimit: OUTCOMES_BODY_LIMIT,
        config: { scope: 'outcomes:write' },
        schema: {
          summary: 'Report delivery outcomes',
          operationId: 'reportOutcomes',
          description: `Up to ${MAX_EVENTS_PER_REQUEST} events of the account's own sends (bounces, deliveries, complaints, engagement). Each event is checked on its own: the refused ones are listed with their index and reason, the others are stored in one transaction. An event the account already holds (same address, type, time and source_id) is counted as a duplicate. A test key's events are checked and not stored. See docs/outcomes.md.`,
          tags: ['outcomes'],
          body: outcomesBodySchema,
          response: { 200: outcomesReportSchema, ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS]) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const { events } = request.body as { events: OutcomeEventInput[] };
        const report = await takeOutcomes(
          {
            db: deps.db,
            clock: deps.clock,
            retentionMs: deps.config.outcomeRetentionMs,
            resultCache: deps.resultCache ?? null,
          },
          { accountId: auth.accountId, source: 'api', events, dryRun: auth.kind === 'test' },
        );
        request.log.info(
          { taken: report.taken, duplicates: report.duplicates, refused: report.refused },
          'outcomes taken',
        );
        return { ...report, request_id: request.id };
      },
    );
    app.delete(
      '/v1/outcomes',
      {
        config: { scope: 'outcomes:write' },
        schema: {
          summary: "Erase an address's outcomes",
          operationId: 'eraseOutcomes',
          description:
            "Deletes every delivery outcome the account holds for the address (the right to be forgotten): its verifications no longer rest on them. The address's cached verification is forgotten too.",
          tags: ['outcomes'],
          querystring: outcomesEraseQuerySchema,
          response: {
            200: outcomesEraseSchema,
            ...errorResponses([...AUTH_ERRORS, 'invalid_request', 'invalid_email_format']),
          },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const { email } = request.query as { email: string };
        const deleted =
          auth.kind === 'test'
            ? 0
            : await eraseOutcomes(
                { db: deps.db, resultCache: deps.resultCache ?? null, verdictLog: deps.verdictLog },
                { accountId: auth.accountId, email },
              );
        return { deleted, request_id: request.id };
      },
    );
  };
}
