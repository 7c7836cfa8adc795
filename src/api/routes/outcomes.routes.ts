/**
 * POST /v1/outcomes (delivery outcomes in: JSON events, or one raw bounce or complaint message,
 * docs/outcomes.md "Bounce and complaint messages") and DELETE /v1/outcomes?email= (an address's
 * history erased); docs/outcomes.md. A test key's events are checked and answered like a live
 * key's, and stored nowhere.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import { takeOutcomeMessage } from '../../services/outcomes/bounce-intake.service.js';
import { MAX_MESSAGE_BYTES } from '../../services/outcomes/bounce-message.js';
import {
  eraseOutcomes,
  MAX_EVENTS_PER_REQUEST,
  OUTCOMES_FILE_LIMIT,
  takeOutcomes,
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
import { createValidatorCompiler } from '../validation.js';

/** 10,000 events of the longest fields fit; a larger body is refused before it is parsed. */
export const OUTCOMES_BODY_LIMIT = OUTCOMES_FILE_LIMIT;

const MESSAGE_TYPE = 'message/rfc822';
const requestValidator = createValidatorCompiler();
/** A raw message is a Buffer, read by its own parser: its schema is for the OpenAPI document only. */
const messageBodyUnchecked: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' && route.contentType === MESSAGE_TYPE ? () => true : requestValidator(route);

const tooLarge = () =>
  new AppError('payload_too_large', `a message is at most ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`);

export function outcomesRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // Scoped to this plugin: only POST /v1/outcomes takes a raw message.
    app.addContentTypeParser(MESSAGE_TYPE, { parseAs: 'buffer' }, (_request, body, done) => {
      if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) return done(tooLarge());
      done(null, body);
    });
    const intakeDeps = {
      db: deps.db,
      clock: deps.clock,
      retentionMs: deps.config.outcomeRetentionMs,
      resultCache: deps.resultCache ?? null,
    };
    // Two content types: the provider types one body schema, so the route names both of its bodies.
    app.post<{ Body: Static<typeof outcomesBodySchema> | Buffer }>(
      '/v1/outcomes',
      {
        bodyLimit: OUTCOMES_BODY_LIMIT,
        // A message's declared length is checked before its body is read (the route's limit is JSON's).
        preParsing: (request, _reply, payload, done) => {
          const declared = Number(request.headers['content-length']);
          if (
            request.headers['content-type']?.toLowerCase().startsWith(MESSAGE_TYPE) &&
            declared > MAX_MESSAGE_BYTES
          )
            return done(tooLarge());
          done(null, payload);
        },
        validatorCompiler: messageBodyUnchecked,
        config: { scope: 'outcomes:write', messageBody: true },
        schema: {
          summary: 'Report delivery outcomes',
          operationId: 'reportOutcomes',
          description: `Either up to ${MAX_EVENTS_PER_REQUEST} events of the account's own sends (bounces, deliveries, complaints, engagement) as JSON, or one raw bounce or complaint message (Content-Type: message/rfc822, at most ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB): a delivery status notification (RFC 3464, or a mailer daemon's text bounce) or an ARF complaint report (RFC 5965), whose recipients become events of source "message" (the answer then adds kind, events and ignored). Each event is checked on its own: the refused ones are listed with their index and reason, the others are stored in one transaction. An event the account already holds (same address, type, time and source_id) is counted as a duplicate. A message that is neither a bounce nor a complaint is refused with 422 not_a_bounce and nothing is stored. A test key's events are checked and not stored. See docs/outcomes.md.`,
          tags: ['outcomes'],
          body: {
            content: {
              'application/json': { schema: outcomesBodySchema },
              [MESSAGE_TYPE]: {
                schema: {
                  type: 'string',
                  format: 'binary',
                  description:
                    'One raw RFC 5322 message as your mail system received it: a bounce (DSN) or a complaint report (ARF).',
                },
              },
            },
          },
          response: {
            200: outcomesReportSchema,
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'not_a_bounce', 'malformed_message']),
          },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        if (Buffer.isBuffer(request.body)) {
          const report = await takeOutcomeMessage(intakeDeps, {
            accountId: auth.accountId,
            raw: request.body,
            dryRun: auth.kind === 'test',
          });
          request.log.info(
            {
              kind: report.kind,
              taken: report.taken,
              duplicates: report.duplicates,
              refused: report.refused,
              ignored: report.ignored.length,
            },
            'outcome message taken',
          );
          return { ...report, request_id: request.id };
        }
        const { events } = request.body;
        const report = await takeOutcomes(intakeDeps, {
          accountId: auth.accountId,
          source: 'api',
          events,
          dryRun: auth.kind === 'test',
        });
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
        const { email } = request.query;
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
