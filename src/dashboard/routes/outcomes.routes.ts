/**
 * The Outcomes page's API (docs/outcomes.md, "The dashboard's Outcomes page"): a file of outcomes
 * uploaded (its kind said by its Content-Type), what came in per day and per source, and the
 * accuracy report. Every call is the signed-in member's account's; an upload is refused while the
 * account is suspended, and is in the security log (its counts, never an address).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { refuseIfSuspended } from '../../services/accounts/accounts.service.js';
import { AppError } from '../../errors.js';
import { accuracyReport, reportPeriod } from '../../services/outcomes/report.service.js';
import { intakeSummary } from '../../services/outcomes/report-intake.js';
import { uploadOutcomes, type OutcomeFileKind } from '../../services/outcomes/upload.service.js';
import { OUTCOMES_FILE_LIMIT } from '../../services/outcomes/intake.service.js';
import { MAX_MBOX_BYTES } from '../../services/outcomes/bounce-mbox.js';
import {
  AccuracyQuery,
  AccuracyReport,
  OutcomeIntake,
  OutcomeIntakeQuery,
  OutcomeUploadReport,
} from '../contract.js';
import { byMember } from '../audit-origin.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

/** The file kinds by Content-Type. */
const KINDS: Readonly<Record<string, OutcomeFileKind>> = {
  'text/csv': 'csv',
  'application/mbox': 'mbox',
};

export function outcomesRoutes(deps: DashboardDeps) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/outcomes/intake',
      { schema: { querystring: OutcomeIntakeQuery, response: { 200: OutcomeIntake } } },
      async (request) => intakeSummary(deps, requireSession(request).accountId, request.query.days ?? 30),
    );

    app.get(
      '/outcomes/report',
      { schema: { querystring: AccuracyQuery, response: { 200: AccuracyReport } } },
      async (request) =>
        accuracyReport(deps, {
          accountId: requireSession(request).accountId,
          ...reportPeriod(deps.clock, request.query),
        }),
    );

    await app.register(uploadRoute(deps));
  };
}

function uploadRoute(deps: DashboardDeps) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // A CSV of events is small (10,000 rows); an mbox carries whole messages (bounce-mbox.ts's bound).
    app.addContentTypeParser(
      'text/csv',
      { parseAs: 'buffer', bodyLimit: OUTCOMES_FILE_LIMIT },
      (_r, body, done) => done(null, body),
    );
    app.addContentTypeParser(
      'application/mbox',
      { parseAs: 'buffer', bodyLimit: MAX_MBOX_BYTES },
      (_r, body, done) => done(null, body),
    );
    app.post(
      '/outcomes/upload',
      { bodyLimit: MAX_MBOX_BYTES, schema: { response: { 200: OutcomeUploadReport } } },
      async (request) => {
        const session = requireSession(request);
        const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        const kind = KINDS[type];
        if (kind === undefined || !Buffer.isBuffer(request.body))
          throw new AppError(
            'unsupported_media_type',
            'upload the file as it is, with Content-Type: text/csv or application/mbox',
          );
        // The route takes an mbox's size; a CSV has its own, smaller bound.
        if (kind === 'csv' && request.body.byteLength > OUTCOMES_FILE_LIMIT)
          throw new AppError(
            'payload_too_large',
            `a CSV of outcomes is at most ${OUTCOMES_FILE_LIMIT / 1024 / 1024} MiB`,
          );
        // Refused early (before the file is read) and again inside the upload's transaction.
        await refuseIfSuspended(deps.db, session.accountId);
        const report = await uploadOutcomes(
          {
            db: deps.db,
            clock: deps.clock,
            retentionMs: deps.config.outcomeRetentionMs,
            resultCache: deps.resultCache ?? null,
          },
          { accountId: session.accountId, kind, raw: request.body },
          byMember(request, session),
        );
        request.log.info(
          { kind, taken: report.taken, duplicates: report.duplicates, refused: report.refused },
          'outcomes uploaded',
        );
        return report;
      },
    );
  };
}
