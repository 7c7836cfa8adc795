/**
 * The body of GET /v1/jobs/:id/results in its two formats (docs/api.md), written from the one
 * reader of a job's results (services/jobs.service.ts `openResults`) that the dashboard's
 * download reads too.
 */
import { csvRows } from '../services/csv-export.js';
import type { JobResults } from '../services/jobs.service.js';

export type ResultsFormat = 'csv' | 'json';

export const CSV_HEADER = 'email,status,score,reason\r\n';

/** The body, one piece per stored chunk; the JSON envelope carries the request's id. */
export function resultsBody(
  results: JobResults,
  format: ResultsFormat,
  requestId: string,
): AsyncGenerator<string> {
  return format === 'csv' ? csvBody(results) : jsonBody(results, requestId);
}

async function* csvBody({ chunks }: JobResults): AsyncGenerator<string> {
  yield CSV_HEADER;
  for await (const chunk of chunks) {
    yield csvRows(chunk.rows.map((r, i) => [chunk.emails[i]!, r.status, r.score, r.reason ?? '']));
  }
}

async function* jsonBody({ job, chunks }: JobResults, requestId: string): AsyncGenerator<string> {
  yield `{"job_id":${JSON.stringify(job.id)},"results":[`;
  let first = true;
  for await (const chunk of chunks) {
    const parts = chunk.rows.map((r, i) =>
      JSON.stringify({
        index: chunk.startIndex + i,
        email: chunk.emails[i],
        status: r.status,
        score: r.score,
        reason: r.reason,
        // A result shared through the cache by an older process may lack it.
        provider: r.provider ?? null,
      }),
    );
    yield (first ? '' : ',') + parts.join(',');
    first = false;
  }
  yield `],"request_id":${JSON.stringify(requestId)}}`;
}
