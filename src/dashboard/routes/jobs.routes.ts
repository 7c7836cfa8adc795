/**
 * The account's batch jobs and the list upload (docs/dashboard.md, "Lists"): the list, one job
 * with its counts, cancellation, the download (CSV or XLSX, with the uploaded file's columns), and POST /lists,
 * whose body is the CSV file itself (text/csv, read as a stream in a scope of its own).
 */
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../errors.js';
import {
  cancelJobItem,
  getJobDetail,
  listJobItems,
  parseVerdicts,
  jobItemOf,
} from '../../services/batches/job-list.service.js';
import { openDownload, type Download } from '../../services/lists/list-download.js';
import {
  listHistory,
  openChanges,
  scheduleOfJob,
  setSchedule,
} from '../../services/lists/list-schedule.service.js';
import { BATCH_BODY_LIMIT } from '../../services/batches/batch-intake.js';
import { uploadList } from '../../services/lists/uploads.service.js';
import { systemResolver } from '../../services/webhooks/ssrf.js';
import {
  DownloadQuery,
  IdParams,
  XLSX_MAX_ROWS,
  JobDetail,
  JobItem,
  JobList,
  JobListQuery,
  ListHistory,
  ScheduleAnswer,
  ScheduleBody,
  UploadQuery,
} from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

export function jobsRoutes(deps: DashboardDeps) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/jobs',
      {
        schema: {
          querystring: JobListQuery,
          response: { 200: JobList },
        },
      },
      async (request) => listJobItems(deps, requireSession(request).accountId, request.query.cursor),
    );

    app.get('/jobs/:id', { schema: { params: IdParams, response: { 200: JobDetail } } }, async (request) => {
      const { accountId } = requireSession(request);
      const detail = await getJobDetail(deps, accountId, request.params.id);
      return { ...detail, schedule: await scheduleOfJob(deps, accountId, request.params.id) };
    });

    app.put(
      '/jobs/:id/schedule',
      { schema: { params: IdParams, body: ScheduleBody, response: { 200: ScheduleAnswer } } },
      async (request) => ({
        schedule: await setSchedule(
          deps,
          requireSession(request).accountId,
          request.params.id,
          request.body.every_days,
        ),
      }),
    );

    app.get(
      '/jobs/:id/history',
      { schema: { params: IdParams, response: { 200: ListHistory } } },
      async (request) => ({
        runs: await listHistory(deps, requireSession(request).accountId, request.params.id),
      }),
    );

    app.get('/jobs/:id/changes', { schema: { params: IdParams } }, async (request, reply) =>
      sendDownload(reply, await openChanges(deps, requireSession(request).accountId, request.params.id)),
    );

    app.post(
      '/jobs/:id/cancel',
      { schema: { params: IdParams, response: { 200: JobItem } } },
      async (request) => cancelJobItem(deps, requireSession(request).accountId, request.params.id),
    );

    app.get(
      '/jobs/:id/download',
      { schema: { params: IdParams, querystring: DownloadQuery } },
      async (request, reply) => {
        const { verdicts, format, corrected } = request.query;
        const download = await openDownload(deps, requireSession(request).accountId, request.params.id, {
          verdicts: parseVerdicts(verdicts),
          format: format ?? 'csv',
          corrected: corrected ?? null,
          xlsxMaxRows: XLSX_MAX_ROWS,
        });
        return sendDownload(reply, download);
      },
    );

    await app.register(uploadRoute(deps));
  };
}

function sendDownload(reply: FastifyReply, download: Download): FastifyReply {
  void reply
    .type(download.contentType)
    .header('content-disposition', `attachment; filename="${download.filename}"`)
    .header('cache-control', 'no-store');
  return reply.send(Readable.from(download.body, { objectMode: false }));
}

function uploadRoute(deps: DashboardDeps) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // The body is handed over as the stream it is: uploads.service.ts parses it as it arrives.
    app.addContentTypeParser('text/csv', (request, payload, done) => {
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > BATCH_BODY_LIMIT) {
        done(
          new AppError('payload_too_large', `the file is larger than ${BATCH_BODY_LIMIT / 1024 / 1024} MiB`),
        );
        return;
      }
      done(null, payload);
    });
    app.post(
      '/lists',
      { bodyLimit: BATCH_BODY_LIMIT, schema: { querystring: UploadQuery, response: { 202: JobItem } } },
      async (request, reply) => {
        const session = requireSession(request);
        if (!(request.body instanceof Readable))
          throw new AppError(
            'unsupported_media_type',
            'upload the list as its CSV text, with Content-Type: text/csv',
          );
        const query = request.query;
        const job = await uploadList(
          {
            db: deps.db,
            clock: deps.clock,
            config: deps.config,
            plans: deps.plans,
            resolveHost: systemResolver,
            usageCache: deps.usageCache,
          },
          {
            accountId: session.accountId,
            name: query.name,
            emailColumn: query.email_column,
            header: query.header,
            mode: query.mode,
            body: request.body,
            byteLimit: BATCH_BODY_LIMIT,
          },
        );
        return reply.code(202).send(await jobItemOf(deps, job));
      },
    );
  };
}
